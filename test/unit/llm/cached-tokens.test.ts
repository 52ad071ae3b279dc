import { expect } from 'chai';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { createAnthropicProvider } from '../../../src/llm/providers/anthropic.js';
import { createGeminiProvider } from '../../../src/llm/providers/gemini.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import type { Provider } from '../../../src/llm/types.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

const KEY = 'sk-test-0123456789abcdefXYZ';
const signal = () => new AbortController().signal;
const HELLO = [{ role: 'user' as const, content: 'hi' }];

describe('cached input tokens reported by the providers (fake servers on 127.0.0.1)', () => {
  let server: FakeServer;
  let http: HttpClient;
  beforeEach(async () => {
    server = await startFakeServer();
  });
  afterEach(async () => {
    await http.close();
    await server.close();
  });

  function openai(): Provider {
    http = createHttpClient({ provider: 'openai', secrets: [KEY] });
    return createOpenAiCompatibleProvider({
      name: 'openai',
      http,
      chatUrl: () => `${server.url}/v1/chat/completions`,
      modelsUrl: `${server.url}/v1/models`,
      headers: { authorization: `Bearer ${KEY}` },
    });
  }

  it('OpenAI: prompt_tokens_details.cached_tokens, in an answer and in a stream', async () => {
    const provider = openai();
    server.handle((_req, res) =>
      sendJson(
        res,
        200,
        openAiAnswer('ok', { usage: { prompt: 2000, completion: 40, cached: 1536 } }),
      ),
    );
    const answer = await provider.chat({ model: 'gpt-x', messages: HELLO, signal: signal() });
    expect(answer.usage).to.deep.equal({ input: 2000, output: 40, total: 2040, cached: 1536 });

    server.handle((_req, res) =>
      sendSse(
        res,
        openAiChunks('streamed', { usage: { prompt: 1200, completion: 9, cached: 1024 } }),
      ),
    );
    const streamed = await provider.chat({
      model: 'gpt-x',
      messages: HELLO,
      signal: signal(),
      onDelta: () => undefined,
    });
    expect(streamed.usage).to.deep.equal({ input: 1200, output: 9, total: 1209, cached: 1024 });

    // No details, or zero cached: no `cached` field.
    server.handle((_req, res) =>
      sendJson(res, 200, openAiAnswer('ok', { usage: { prompt: 5, completion: 1, cached: 0 } })),
    );
    const plain = await provider.chat({ model: 'gpt-x', messages: HELLO, signal: signal() });
    expect(plain.usage).to.deep.equal({ input: 5, output: 1, total: 6 });
  });

  it('Anthropic: cache_read_input_tokens and cache_creation_input_tokens count as input, apart', async () => {
    http = createHttpClient({ provider: 'anthropic', secrets: [KEY] });
    const provider = createAnthropicProvider({ http, baseUrl: server.url, apiKey: KEY });
    server.handle((_req, res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x-20250101',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: {
          input_tokens: 100,
          cache_read_input_tokens: 800,
          cache_creation_input_tokens: 50,
          output_tokens: 20,
        },
      }),
    );
    const answer = await provider.chat({ model: 'claude-x', messages: HELLO, signal: signal() });
    expect(answer.usage).to.deep.equal({
      input: 950,
      output: 20,
      total: 970,
      cached: 800,
      cacheWrite: 50,
    });

    server.handle((_req, res) =>
      sendSse(
        res,
        [
          {
            event: 'message_start',
            data: {
              type: 'message_start',
              message: {
                model: 'claude-x-1',
                usage: {
                  input_tokens: 7,
                  cache_read_input_tokens: 3000,
                  cache_creation_input_tokens: 0,
                  output_tokens: 1,
                },
              },
            },
          },
          {
            event: 'content_block_delta',
            data: {
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'text_delta', text: 'hi' },
            },
          },
          {
            event: 'message_delta',
            data: {
              type: 'message_delta',
              delta: { stop_reason: 'end_turn' },
              usage: { output_tokens: 15 },
            },
          },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ],
        { pieceBytes: 5 },
      ),
    );
    const streamed = await provider.chat({
      model: 'claude-x',
      messages: HELLO,
      signal: signal(),
      onDelta: () => undefined,
    });
    expect(streamed.usage).to.deep.equal({ input: 3007, output: 15, total: 3022, cached: 3000 });
  });

  it('Gemini: cachedContentTokenCount (a part of promptTokenCount); thoughts count as output', async () => {
    http = createHttpClient({ provider: 'gemini', secrets: [KEY] });
    const provider = createGeminiProvider({ http, baseUrl: server.url, apiKey: KEY });
    server.handle((_req, res) =>
      sendJson(res, 200, {
        candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
        usageMetadata: {
          promptTokenCount: 1000,
          cachedContentTokenCount: 600,
          candidatesTokenCount: 50,
          thoughtsTokenCount: 30,
          totalTokenCount: 1080,
        },
        modelVersion: 'gemini-x-001',
      }),
    );
    const answer = await provider.chat({ model: 'gemini-x', messages: HELLO, signal: signal() });
    expect(answer.usage).to.deep.equal({ input: 1000, output: 80, total: 1080, cached: 600 });

    server.handle((_req, res) =>
      sendSse(
        res,
        [
          {
            candidates: [{ content: { role: 'model', parts: [{ text: 'a' }] } }],
            usageMetadata: {
              promptTokenCount: 500,
              cachedContentTokenCount: 256,
              candidatesTokenCount: 1,
            },
          },
          {
            candidates: [
              { content: { role: 'model', parts: [{ text: 'b' }] }, finishReason: 'STOP' },
            ],
            usageMetadata: {
              promptTokenCount: 500,
              cachedContentTokenCount: 256,
              candidatesTokenCount: 2,
              totalTokenCount: 502,
            },
          },
        ],
        { pieceBytes: 3 },
      ),
    );
    const streamed = await provider.chat({
      model: 'gemini-x',
      messages: HELLO,
      signal: signal(),
      onDelta: () => undefined,
    });
    expect(streamed.usage).to.deep.equal({ input: 500, output: 2, total: 502, cached: 256 });
  });
});
