import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { loadConfig } from '../../../src/config/index.js';
import { createHttpClient, readJson, type HttpClient } from '../../../src/llm/http.js';
import { createProviderSet } from '../../../src/llm/provider-set.js';
import { LlmError } from '../../../src/llm/llm-error.js';
import { createAnthropicProvider } from '../../../src/llm/providers/anthropic.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createSseParser } from '../../../src/llm/sse-parser.js';
import { readSseJson } from '../../../src/llm/stream-reader.js';
import type { Provider } from '../../../src/llm/types.js';
import { openAiChunks, startFakeServer, type FakeServer } from '../../fixtures/llm/fake-server.js';
import { rejection } from '../../support/rejection.js';

/** The answer bound of these tests: small, so a runaway answer passes it quickly. */
const BOUND = 64 * 1024;
/** What the fake provider writes at most before giving up (far beyond the bound). */
const SERVER_CAP = 32 * 1024 * 1024;
const KB_LINE = `data: ${'x'.repeat(1018)}\n`;

/**
 * Writes `next()` (with backpressure) until the client goes away, `next` says stop, or `cap`
 * bytes went out; resolves with the bytes written.
 */
async function writeUntilClosed(
  res: ServerResponse,
  next: () => string | undefined,
  cap = SERVER_CAP,
  gapMs = 0,
): Promise<number> {
  let written = 0;
  while (!res.destroyed && written < cap) {
    const text = next();
    if (text === undefined) break;
    written += Buffer.byteLength(text);
    if (!res.write(text)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  if (!res.destroyed) res.end();
  return written;
}

/** An async body that yields `chunk` forever, counting the bytes the reader pulled. */
function endlessBody(chunk: string): { body: AsyncIterable<Uint8Array>; pulled: () => number } {
  const bytes = new TextEncoder().encode(chunk);
  let pulled = 0;
  return {
    pulled: () => pulled,
    body: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          pulled += bytes.length;
          yield await Promise.resolve(bytes);
        }
      },
    },
  };
}

const signal = () => new AbortController().signal;

describe('LLM answer bounds (fake providers on 127.0.0.1)', () => {
  let server: FakeServer;
  let http: HttpClient | undefined;
  let openai: Provider;
  let anthropic: Provider;
  let written: Promise<number>;

  const make = (
    options: { maxAnswerBytes?: number; idleMs?: number; callMs?: number; bodyMs?: number } = {},
  ) => {
    http = createHttpClient({
      provider: 'fake',
      timeouts: {
        connectMs: 2000,
        headersMs: 5000,
        bodyMs: options.bodyMs ?? 10_000,
        ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
        ...(options.callMs === undefined ? {} : { callMs: options.callMs }),
      },
      ...(options.maxAnswerBytes === undefined ? {} : { maxAnswerBytes: options.maxAnswerBytes }),
    });
    openai = createOpenAiCompatibleProvider({
      name: 'openai',
      http,
      chatUrl: () => `${server.url}/v1/chat/completions`,
      modelsUrl: `${server.url}/v1/models`,
      headers: {},
    });
    anthropic = createAnthropicProvider({ http, baseUrl: server.url, apiKey: 'k' });
  };
  const chat = (provider: Provider, stream: boolean) =>
    provider.chat({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      signal: signal(),
      ...(stream ? { onDelta: () => undefined } : {}),
    });

  beforeEach(async () => {
    server = await startFakeServer();
  });
  afterEach(async () => {
    await http?.close();
    http = undefined;
    await server.close();
  });

  describe('answer bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)', () => {
    it('fails a never-ending OpenAI SSE event with an error naming the bound, long before the provider stops', async () => {
      make({ maxAnswerBytes: BOUND });
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        written = writeUntilClosed(res, () => KB_LINE);
      });
      const error = await rejection(chat(openai, true));
      expect(error).to.be.instanceOf(LlmError);
      expect(error.message).to.equal(
        `fake: answer exceeds ${BOUND} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
      );
      expect((error as LlmError).kind).to.equal('transient');
      // The client hung up: the provider stopped far below what it meant to send.
      expect(await written).to.be.lessThan(SERVER_CAP / 2);
    });

    it('fails a never-ending Anthropic SSE event the same way', async () => {
      make({ maxAnswerBytes: BOUND });
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: content_block_delta\n');
        written = writeUntilClosed(res, () => KB_LINE);
      });
      const error = await rejection(chat(anthropic, true));
      expect(error.message).to.equal(
        `fake: answer exceeds ${BOUND} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
      );
      expect(await written).to.be.lessThan(SERVER_CAP / 2);
    });

    it('fails an oversized non-streamed JSON answer (no content-length) naming the bound', async () => {
      make({ maxAnswerBytes: BOUND });
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"choices":[{"message":{"content":"');
        written = writeUntilClosed(res, () => 'y'.repeat(1024));
      });
      const error = await rejection(chat(openai, false));
      expect(error.message).to.equal(
        `fake: answer exceeds ${BOUND} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
      );
      expect(await written).to.be.lessThan(SERVER_CAP / 2);
    });

    it('still reads an answer just under the bound', async () => {
      make({ maxAnswerBytes: BOUND });
      const text = 'z'.repeat(BOUND / 2);
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          openAiChunks(text, { parts: 8 })
            .map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`)
            .join(''),
        );
      });
      expect((await chat(openai, true)).text).to.equal(text);
    });

    it('the stream reader stops pulling at the bound: an event without end buffers at most the bound', async () => {
      const source = endlessBody(KB_LINE);
      const error = await rejection(
        readSseJson('p', { body: source.body, maxAnswerBytes: BOUND }, () => undefined),
      );
      expect(error.message).to.equal(
        `p: answer exceeds ${BOUND} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
      );
      expect(source.pulled()).to.be.at.most(BOUND + KB_LINE.length);
    });

    it('the JSON reader stops pulling at the bound', async () => {
      const source = endlessBody('{"a":"' + 'q'.repeat(1000));
      const error = await rejection(readJson('p', source.body, BOUND));
      expect(error.message).to.equal(
        `p: answer exceeds ${BOUND} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
      );
      expect(source.pulled()).to.be.at.most(BOUND + 1006);
    });

    it('the SSE parser refuses an event whose data lines exceed its bound', () => {
      const parser = createSseParser({ maxEventBytes: 4096 });
      let fed = 0;
      const feed = (): void => {
        for (let line = 0; line < 100_000; line++) {
          parser.push('data: 0123456789abcdef\n');
          fed += 23;
        }
      };
      expect(feed).to.throw('event stream event exceeds 4096 bytes');
      expect(fed).to.be.at.most(4096);
    });
  });

  describe('idle timeout and call deadline', () => {
    const delta = (text: string): string =>
      `data: ${JSON.stringify({ model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;

    it('fails an OpenAI stream that sends one delta and then only comments at the idle timeout (AGENTIC_LLM_IDLE_TIMEOUT_MS)', async () => {
      make({ idleMs: 300 });
      let sent = 0;
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(delta('hel'));
        // Comments every 20 ms for up to 6 s, then a clean end without the answer's end.
        written = writeUntilClosed(
          res,
          () => (sent++ < 300 ? ': keep-alive\n\n' : undefined),
          SERVER_CAP,
          20,
        );
      });
      const error = await rejection(chat(openai, true));
      expect(error.message).to.equal(
        'openai: no data for 300 ms (AGENTIC_LLM_IDLE_TIMEOUT_MS; comments and keep-alives do not count)',
      );
      expect((error as LlmError).kind).to.equal('transient');
      await written;
      expect(sent).to.be.lessThan(300);
    });

    it('fails an Anthropic stream that sends one delta and then only ping events at the idle timeout', async () => {
      make({ idleMs: 300 });
      let sent = 0;
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { model: 'm', usage: { input_tokens: 3 } } })}\n\n` +
            `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } })}\n\n`,
        );
        written = writeUntilClosed(
          res,
          () => (sent++ < 300 ? 'event: ping\ndata: {"type": "ping"}\n\n' : undefined),
          SERVER_CAP,
          20,
        );
      });
      const error = await rejection(chat(anthropic, true));
      expect(error.message).to.equal(
        'anthropic: no data for 300 ms (AGENTIC_LLM_IDLE_TIMEOUT_MS; comments and keep-alives do not count)',
      );
      await written;
      expect(sent).to.be.lessThan(300);
    });

    it('a stream that keeps sending real data is not idle, and fails at the call deadline (AGENTIC_LLM_CALL_TIMEOUT_MS)', async () => {
      make({ idleMs: 200, callMs: 600 });
      let sent = 0;
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // A delta every 20 ms for up to 6 s, then a complete answer.
        written = writeUntilClosed(
          res,
          () => (sent++ < 300 ? delta('.') : sent === 302 ? undefined : 'data: [DONE]\n\n'),
          SERVER_CAP,
          20,
        );
      });
      const error = await rejection(chat(openai, true));
      expect(error.message).to.equal(
        'fake: answer not complete after 600 ms (AGENTIC_LLM_CALL_TIMEOUT_MS)',
      );
      expect((error as LlmError).kind).to.equal('transient');
      await written;
      expect(sent).to.be.lessThan(300);
    });

    it('the call deadline also ends a non-streamed answer that trickles in', async () => {
      make({ callMs: 400 });
      let sent = 0;
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        written = writeUntilClosed(res, () => (sent++ < 300 ? ' ' : undefined), SERVER_CAP, 20);
      });
      const error = await rejection(chat(openai, false));
      expect(error.message).to.equal(
        'fake: answer not complete after 400 ms (AGENTIC_LLM_CALL_TIMEOUT_MS)',
      );
      await written;
      expect(sent).to.be.lessThan(300);
    });

    it('a cancelled call still ends with the caller reason, not a timeout', async () => {
      make({ idleMs: 5000, callMs: 5000 });
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(delta('a'));
      });
      const controller = new AbortController();
      const call = openai.chat({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        signal: controller.signal,
        onDelta: () => controller.abort(new Error('cancelled')),
      });
      expect((await rejection(call)).message).to.equal('cancelled');
    });
  });
  describe('from the configuration', () => {
    it('the providers take the bounds of AGENTIC_LLM_MAX_ANSWER_BYTES and AGENTIC_LLM_IDLE_TIMEOUT_MS', async () => {
      const config = loadConfig({
        OPENAI_BASE_URL: `${server.url}/v1`,
        AGENTIC_LLM_MAX_ANSWER_BYTES: String(BOUND),
        AGENTIC_LLM_IDLE_TIMEOUT_MS: '250',
      });
      const providers = createProviderSet(config.llm);
      try {
        const provider = providers.get('openai')!;
        server.handle((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          written = writeUntilClosed(res, () => KB_LINE);
        });
        expect((await rejection(chat(provider, true))).message).to.equal(
          `openai: answer exceeds ${BOUND} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
        );
        await written;
        server.handle((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          written = writeUntilClosed(res, () => ': ping\n\n', SERVER_CAP, 20);
        });
        expect((await rejection(chat(provider, true))).message).to.equal(
          'openai: no data for 250 ms (AGENTIC_LLM_IDLE_TIMEOUT_MS; comments and keep-alives do not count)',
        );
        await written;
      } finally {
        await providers.close();
      }
    });
  });

  describe('tokens of a failed call', () => {
    it('an Anthropic stream reset after message_start and message_delta carries their usage as spentTokens', async () => {
      make();
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const text =
          `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { model: 'm', usage: { input_tokens: 120, output_tokens: 1 } } })}\n\n` +
          `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } })}\n\n` +
          `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: {}, usage: { output_tokens: 30 } })}\n\n`;
        res.write(text, () => res.socket?.resetAndDestroy());
      });
      const error = await rejection(chat(anthropic, true));
      expect(error).to.be.instanceOf(LlmError);
      expect((error as LlmError).spentTokens).to.deep.equal({ input: 120, output: 30, total: 150 });
    });
  });
});
