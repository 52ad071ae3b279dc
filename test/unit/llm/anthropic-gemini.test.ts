import { expect } from 'chai';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import type { LlmError } from '../../../src/llm/llm-error.js';
import { createAnthropicProvider } from '../../../src/llm/providers/anthropic.js';
import { createGeminiProvider } from '../../../src/llm/providers/gemini.js';
import type { ChatMessage, Provider } from '../../../src/llm/types.js';
import {
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';
import { rejection } from '../../support/rejection.js';

const signal = () => new AbortController().signal;
const TOOL = {
  name: 'lookup',
  description: 'find a thing',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
};
const CONVERSATION: ChatMessage[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'find x' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'tu_1', name: 'lookup', arguments: '{"q":"x"}' }],
  },
  { role: 'tool', content: 'x is 42', toolCallId: 'tu_1', name: 'lookup' },
];

describe('Anthropic Messages provider (fake server on 127.0.0.1)', () => {
  let server: FakeServer;
  let http: HttpClient;
  let provider: Provider;
  const KEY = 'sk-ant-api03-secretsecretsecret';

  beforeEach(async () => {
    server = await startFakeServer();
    http = createHttpClient({ provider: 'anthropic', secrets: [KEY] });
    provider = createAnthropicProvider({ http, baseUrl: server.url, apiKey: KEY });
  });
  afterEach(async () => {
    await http.close();
    await server.close();
  });

  it('sends system apart, tool_use / tool_result blocks and tools; reads text, tool calls and usage', async () => {
    server.handle((_req, res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x-20250101',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'tu_2', name: 'lookup', input: { q: 'y' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 30, output_tokens: 12 },
      }),
    );
    const result = await provider.chat({
      model: 'claude-x',
      messages: CONVERSATION,
      tools: [TOOL],
      temperature: 1.5,
      signal: signal(),
    });
    expect(result).to.deep.equal({
      text: 'Let me look.',
      model: 'claude-x-20250101',
      usage: { input: 30, output: 12, total: 42 },
      finishReason: 'tool_use',
      toolCalls: [{ id: 'tu_2', name: 'lookup', arguments: '{"q":"y"}' }],
    });
    const req = server.requests[0]!;
    expect(req.path).to.equal('/v1/messages');
    expect(req.headers['x-api-key']).to.equal(KEY);
    expect(req.headers['anthropic-version']).to.equal('2023-06-01');
    expect(req.body).to.deep.equal({
      model: 'claude-x',
      max_tokens: 4096,
      system: 'sys',
      temperature: 1,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'find x' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { q: 'x' } }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'x is 42' }],
        },
      ],
      tools: [{ name: 'lookup', description: 'find a thing', input_schema: TOOL.parameters }],
    });
  });

  it('streams typed events split at awkward byte boundaries, with tool input deltas and usage', async () => {
    const events = [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: { model: 'claude-x-1', usage: { input_tokens: 25, output_tokens: 1 } },
        },
      },
      {
        event: 'content_block_start',
        data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      },
      { event: 'ping', data: { type: 'ping' } },
      {
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'Bonjour, ' },
        },
      },
      {
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'ça va? 🤖' },
        },
      },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 'tu_9', name: 'lookup', input: {} },
        },
      },
      {
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: '{"q": "' },
        },
      },
      {
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: 'z"}' },
        },
      },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use' },
          usage: { output_tokens: 17 },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ];
    server.handle((_req, res) => sendSse(res, events, { pieceBytes: 3, eol: '\r\n' }));
    const deltas: string[] = [];
    const result = await provider.chat({
      model: 'claude-x',
      messages: CONVERSATION.slice(0, 2),
      signal: signal(),
      onDelta: (d) => deltas.push(d),
    });
    expect(deltas).to.deep.equal(['Bonjour, ', 'ça va? 🤖']);
    expect(result).to.deep.equal({
      text: 'Bonjour, ça va? 🤖',
      model: 'claude-x-1',
      usage: { input: 25, output: 17, total: 42 },
      finishReason: 'tool_use',
      toolCalls: [{ id: 'tu_9', name: 'lookup', arguments: '{"q": "z"}' }],
    });
    expect(server.requests[0]!.body).to.deep.include({ stream: true });
  });

  it('fails a mid-stream error event and a stream without message_stop as transient', async () => {
    server.handle((_req, res) =>
      sendSse(res, [
        {
          event: 'error',
          data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        },
      ]),
    );
    const error = await rejection(
      provider.chat({ model: 'c', messages: [], signal: signal(), onDelta: () => undefined }),
    );
    expect((error as LlmError).kind).to.equal('transient');
    expect(error.message).to.equal('anthropic: stream error: Overloaded');
    server.handle((_req, res) =>
      sendSse(res, [{ event: 'message_start', data: { type: 'message_start', message: {} } }]),
    );
    const cut = await rejection(
      provider.chat({ model: 'c', messages: [], signal: signal(), onDelta: () => undefined }),
    );
    expect(cut.message).to.match(/before message_stop/);
  });

  it('classifies 429 with retry-after and 529 overloaded; lists models', async () => {
    server.handle((_req, res) =>
      sendJson(
        res,
        429,
        { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } },
        { 'retry-after': '4' },
      ),
    );
    const limited = await rejection<LlmError>(
      provider.chat({ model: 'c', messages: [], signal: signal() }),
    );
    expect([limited.kind, limited.retryAfterMs]).to.deep.equal(['rate_limited', 4000]);
    server.handle((_req, res) =>
      sendJson(res, 529, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
      }),
    );
    expect(
      (await rejection<LlmError>(provider.chat({ model: 'c', messages: [], signal: signal() })))
        .kind,
    ).to.equal('transient');
    server.handle((_req, res) =>
      sendJson(res, 200, { data: [{ id: 'claude-x-1', type: 'model' }], has_more: false }),
    );
    expect(await provider.listModels(signal())).to.deep.equal(['claude-x-1']);
  });
});

describe('Gemini provider (fake server on 127.0.0.1)', () => {
  let server: FakeServer;
  let http: HttpClient;
  let provider: Provider;
  const KEY = 'AIzaSyFAKEFAKEFAKEFAKEFAKE12345';

  beforeEach(async () => {
    server = await startFakeServer();
    http = createHttpClient({ provider: 'gemini', secrets: [KEY] });
    provider = createGeminiProvider({ http, baseUrl: server.url, apiKey: KEY });
  });
  afterEach(async () => {
    await http.close();
    await server.close();
  });

  it('sends contents, systemInstruction, functionDeclarations and JSON mode; reads text, function calls, usage', async () => {
    server.handle((_req, res) =>
      sendJson(res, 200, {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ text: '{"a":1}' }, { functionCall: { name: 'lookup', args: { q: 'w' } } }],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 },
        modelVersion: 'gemini-x-001',
      }),
    );
    const result = await provider.chat({
      model: 'gemini-x',
      messages: CONVERSATION,
      tools: [TOOL],
      json: true,
      temperature: 0.1,
      maxTokens: 50,
      signal: signal(),
    });
    expect(result).to.deep.equal({
      text: '{"a":1}',
      model: 'gemini-x-001',
      usage: { input: 11, output: 4, total: 15 },
      finishReason: 'STOP',
      toolCalls: [{ id: 'call_0', name: 'lookup', arguments: '{"q":"w"}' }],
    });
    const req = server.requests[0]!;
    expect(req.path).to.equal('/v1beta/models/gemini-x:generateContent');
    expect(req.headers['x-goog-api-key']).to.equal(KEY);
    expect(req.body).to.deep.equal({
      contents: [
        { role: 'user', parts: [{ text: 'find x' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } } }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'lookup', response: { content: 'x is 42' } } }],
        },
      ],
      systemInstruction: { parts: [{ text: 'sys' }] },
      // No responseMimeType beside tools: Gemini refuses JSON mode with function calling.
      generationConfig: { temperature: 0.1, maxOutputTokens: 50 },
      tools: [
        {
          functionDeclarations: [
            { name: 'lookup', description: 'find a thing', parameters: TOOL.parameters },
          ],
        },
      ],
    });
  });

  it('streams streamGenerateContent?alt=sse chunks split at awkward byte boundaries; usage from the last', async () => {
    const chunk = (text: string, extra: Record<string, unknown> = {}) => ({
      candidates: [{ content: { role: 'model', parts: [{ text }] }, ...extra }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 },
    });
    server.handle((_req, res) =>
      sendSse(
        res,
        [
          chunk('Guten '),
          chunk('Tag — '),
          {
            ...chunk('日本 ✓', { finishReason: 'STOP' }),
            usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 7, totalTokenCount: 16 },
          },
        ],
        { pieceBytes: 2 },
      ),
    );
    const deltas: string[] = [];
    const result = await provider.chat({
      model: 'gemini-x',
      messages: [{ role: 'user', content: 'hi' }],
      signal: signal(),
      onDelta: (d) => deltas.push(d),
    });
    expect(deltas).to.deep.equal(['Guten ', 'Tag — ', '日本 ✓']);
    expect(result.usage).to.deep.equal({ input: 9, output: 7, total: 16 });
    expect(server.requests[0]!.path).to.equal(
      '/v1beta/models/gemini-x:streamGenerateContent?alt=sse',
    );
  });

  it('fails a stream cut before a finishReason; lists models without the models/ prefix; scrubs the key', async () => {
    server.handle(async (_req, res) => {
      await sendSse(res, [{ candidates: [{ content: { parts: [{ text: 'half' }] } }] }], {
        end: false,
      });
      res.socket?.destroy();
    });
    const cut = await rejection<LlmError>(
      provider.chat({ model: 'g', messages: [], signal: signal(), onDelta: () => undefined }),
    );
    expect(cut.kind).to.equal('transient');
    server.handle((_req, res) =>
      sendJson(res, 400, {
        error: { code: 400, message: `API key not valid: ${KEY}`, status: 'INVALID_ARGUMENT' },
      }),
    );
    const bad = await rejection<LlmError>(
      provider.chat({ model: 'g', messages: [], signal: signal() }),
    );
    expect(bad.kind).to.equal('invalid_request');
    expect(bad.message).to.not.include(KEY);
    server.handle((_req, res) =>
      sendJson(res, 200, { models: [{ name: 'models/gemini-x' }, { name: 'models/embed-y' }] }),
    );
    expect(await provider.listModels(signal())).to.deep.equal(['gemini-x', 'embed-y']);
    expect(server.requests.at(-1)!.path).to.equal('/v1beta/models');
  });
});
