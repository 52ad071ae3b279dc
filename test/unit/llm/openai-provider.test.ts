import { expect } from 'chai';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { LlmError } from '../../../src/llm/llm-error.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import type { Provider } from '../../../src/llm/types.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  writePieces,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';
import { rejection } from '../../support/rejection.js';

const KEY = 'sk-test-0123456789abcdefXYZ';

describe('OpenAI-compatible provider (fake server on 127.0.0.1)', () => {
  let server: FakeServer;
  let http: HttpClient;
  let provider: Provider;

  beforeEach(async () => {
    server = await startFakeServer();
    http = createHttpClient({
      provider: 'openai',
      secrets: [KEY],
      timeouts: { connectMs: 1000, headersMs: 300, bodyMs: 300 },
    });
    provider = createOpenAiCompatibleProvider({
      name: 'openai',
      http,
      chatUrl: () => `${server.url}/v1/chat/completions`,
      modelsUrl: `${server.url}/v1/models`,
      headers: { authorization: `Bearer ${KEY}` },
    });
  });
  afterEach(async () => {
    await http.close();
    await server.close();
  });

  const signal = () => new AbortController().signal;

  it('sends the chat request in the wire format and reads the answer and usage', async () => {
    server.handle((_req, res) =>
      sendJson(res, 200, openAiAnswer('hi', { usage: { prompt: 12, completion: 3 } })),
    );
    const result = await provider.chat({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      temperature: 0.2,
      json: true,
      tools: [{ name: 'lookup', description: 'find', parameters: { type: 'object' } }],
      signal: signal(),
    });
    expect(result).to.deep.equal({
      text: 'hi',
      model: 'gpt-test',
      usage: { input: 12, output: 3, total: 15 },
      finishReason: 'stop',
      toolCalls: [],
    });
    const [req] = server.requests;
    expect(req?.path).to.equal('/v1/chat/completions');
    expect(req?.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(req?.body).to.deep.equal({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      temperature: 0.2,
      response_format: { type: 'json_object' },
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', description: 'find', parameters: { type: 'object' } },
        },
      ],
    });
  });

  it('streams deltas from chunks split at awkward byte boundaries, usage from the last chunk', async () => {
    const text = 'Grüße, 世界! 👋🏽 done.';
    for (const pieceBytes of [1, 3, 7, 64]) {
      server.handle((_req, res) =>
        sendSse(res, openAiChunks(text, { parts: 6, usage: { prompt: 20, completion: 9 } }), {
          pieceBytes,
          eol: pieceBytes === 3 ? '\r\n' : '\n',
        }),
      );
      const deltas: string[] = [];
      const result = await provider.chat({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'x' }],
        signal: signal(),
        onDelta: (delta) => deltas.push(delta),
      });
      expect(deltas.join(''), `pieces of ${pieceBytes}`).to.equal(text);
      expect(deltas.length).to.be.greaterThan(1);
      expect(result.text).to.equal(text);
      expect(result.usage).to.deep.equal({ input: 20, output: 9, total: 29 });
      expect(result.finishReason).to.equal('stop');
    }
    expect(server.requests[0]?.body).to.deep.include({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('assembles streamed tool calls', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({
      model: 'gpt-test',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    server.handle((_req, res) =>
      sendSse(res, [
        chunk({
          tool_calls: [
            { index: 0, id: 'call_a', type: 'function', function: { name: 'look', arguments: '' } },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { name: 'up', arguments: '{"q":' } }] }),
        chunk({
          tool_calls: [
            {
              index: 1,
              id: 'call_b',
              type: 'function',
              function: { name: 'now', arguments: '{}' },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }),
        chunk({}, 'tool_calls'),
        '[DONE]',
      ]),
    );
    const result = await provider.chat({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'x' }],
      signal: signal(),
      onDelta: () => undefined,
    });
    expect(result.finishReason).to.equal('tool_calls');
    expect(result.toolCalls).to.deep.equal([
      { id: 'call_a', name: 'lookup', arguments: '{"q":"x"}' },
      { id: 'call_b', name: 'now', arguments: '{}' },
    ]);
  });

  it('classifies 429 with Retry-After, 401, 404, context length and 500', async () => {
    const cases: [number, unknown, Record<string, string>, string][] = [
      [429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '3' }, 'rate_limited'],
      [401, { error: { message: `Incorrect API key provided: ${KEY}` } }, {}, 'auth_error'],
      [404, { error: { message: 'The model `nope` does not exist' } }, {}, 'not_found'],
      [
        400,
        { error: { message: "This model's maximum context length is 128000 tokens" } },
        {},
        'context_length',
      ],
      [400, { error: { message: 'temperature must be at most 2' } }, {}, 'invalid_request'],
      [500, { error: { message: 'The server had an error' } }, {}, 'transient'],
    ];
    for (const [status, body, headers, kind] of cases) {
      server.handle((_req, res) => sendJson(res, status, body, headers));
      const error = await rejection<unknown>(
        provider.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }], signal: signal() }),
      );
      expect(error, String(status)).to.be.instanceOf(LlmError);
      expect((error as LlmError).kind, String(status)).to.equal(kind);
      expect((error as LlmError).message).to.not.include(KEY);
      if (status === 429) expect((error as LlmError).retryAfterMs).to.equal(3000);
    }
  });

  it('fails a malformed chunk as transient', async () => {
    server.handle((_req, res) =>
      sendSse(res, [openAiChunks('ok')[1], '{"choices": [ broken', '[DONE]']),
    );
    const error = await rejection<unknown>(
      provider.chat({ model: 'm', messages: [], signal: signal(), onDelta: () => undefined }),
    );
    expect((error as LlmError).kind).to.equal('transient');
    expect((error as LlmError).message).to.match(/malformed stream chunk/);
  });

  it('fails a stream cut off mid-answer (connection destroyed) as transient', async () => {
    server.handle(async (_req, res) => {
      await sendSse(res, openAiChunks('partial answer', { parts: 3 }).slice(0, 2), { end: false });
      res.socket?.destroy();
    });
    const deltas: string[] = [];
    const error = await rejection<unknown>(
      provider.chat({ model: 'm', messages: [], signal: signal(), onDelta: (d) => deltas.push(d) }),
    );
    expect((error as LlmError).kind).to.equal('transient');
    expect(deltas.length).to.be.greaterThan(0);
  });

  it('fails a stream that ends without [DONE] or a finish reason as transient', async () => {
    server.handle((_req, res) => sendSse(res, openAiChunks('cut', { parts: 2 }).slice(0, 2)));
    const error = await rejection<unknown>(
      provider.chat({ model: 'm', messages: [], signal: signal(), onDelta: () => undefined }),
    );
    expect((error as LlmError).message).to.match(/stream ended before/);
  });

  it('times out a slow first byte (headers timeout) as transient', async () => {
    server.handle(() => undefined); // never answers
    const error = await rejection<unknown>(
      provider.chat({ model: 'm', messages: [], signal: signal() }),
    );
    expect((error as LlmError).kind).to.equal('transient');
    expect((error as LlmError).message).to.match(/timeout/i);
  });

  it('aborts mid-stream: rejects with the abort reason and closes the connection', async () => {
    server.handle(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const first = `data: ${JSON.stringify(openAiChunks('first words', { parts: 1 })[1])}\n\n`;
      await writePieces(res, Buffer.from(first), 5);
      // Then nothing: the client must stop on its own.
    });
    const controller = new AbortController();
    const closed = server.clientClosed();
    const call = provider.chat({
      model: 'm',
      messages: [],
      signal: controller.signal,
      onDelta: () => controller.abort(new Error('run cancelled')),
    });
    const error = await rejection<unknown>(call);
    expect((error as Error).message).to.equal('run cancelled');
    await closed;
  });

  it('lists models with GET /models', async () => {
    server.handle((_req, res) =>
      sendJson(res, 200, { object: 'list', data: [{ id: 'a' }, { id: 'b' }] }),
    );
    expect(await provider.listModels(signal())).to.deep.equal(['a', 'b']);
    expect(server.requests[0]?.path).to.equal('/v1/models');
  });
});
