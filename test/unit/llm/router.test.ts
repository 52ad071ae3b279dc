import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { CircuitBreaker } from '../../../src/llm/circuit-breaker.js';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { LlmError } from '../../../src/llm/llm-error.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createLlmRouter, type RouterOptions } from '../../../src/llm/router.js';
import type { LlmRequest, Provider } from '../../../src/llm/types.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';
import { rejection } from '../../support/rejection.js';

describe('CircuitBreaker', () => {
  it('opens after N failures, lets one half-open trial through after the cool-down, closes on success', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 3, cooldownMs: 1000, now: () => now });
    for (let i = 0; i < 2; i++) {
      expect(breaker.tryAcquire()).to.equal(true);
      breaker.failed();
    }
    expect(breaker.current()).to.equal('closed');
    expect(breaker.tryAcquire()).to.equal(true);
    breaker.failed();
    expect(breaker.current()).to.equal('open');
    expect(breaker.tryAcquire()).to.equal(false);
    now = 999;
    expect(breaker.tryAcquire()).to.equal(false);
    now = 1000;
    expect(breaker.current()).to.equal('half_open');
    expect(breaker.tryAcquire()).to.equal(true);
    expect(breaker.tryAcquire(), 'only one trial at a time').to.equal(false);
    breaker.failed();
    expect(breaker.current(), 'a failed trial opens it again').to.equal('open');
    now = 2000;
    expect(breaker.tryAcquire()).to.equal(true);
    breaker.succeeded();
    expect(breaker.current()).to.equal('closed');
    breaker.failed();
    expect(breaker.current(), 'success reset the count').to.equal('closed');
  });
});

describe('createLlmRouter (fake OpenAI-compatible servers on 127.0.0.1)', () => {
  let a: FakeServer;
  let b: FakeServer;
  const clients: HttpClient[] = [];
  let providers: Map<string, Provider>;

  function providerFor(name: string, server: FakeServer): Provider {
    const http = createHttpClient({ provider: name });
    clients.push(http);
    return createOpenAiCompatibleProvider({
      name,
      http,
      chatUrl: () => `${server.url}/v1/chat/completions`,
      modelsUrl: `${server.url}/v1/models`,
      headers: {},
    });
  }

  beforeEach(async () => {
    a = await startFakeServer();
    b = await startFakeServer();
    providers = new Map([
      ['alpha', providerFor('alpha', a)],
      ['beta', providerFor('beta', b)],
    ]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await a.close();
    await b.close();
  });

  function router(overrides: Partial<RouterOptions> = {}) {
    return createLlmRouter({
      providers: {
        get: (name) => providers.get(name),
        missing: (name) => (name === 'gamma' ? 'GAMMA_API_KEY not set' : undefined),
      },
      chains: { '2': ['gamma:g1', 'alpha:a1', 'beta:b1'] },
      ...overrides,
    });
  }

  const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
    tier: 2,
    system: 'persona',
    prompt: 'do it',
    signal: new AbortController().signal,
    ...extra,
  });

  it('counts the tokens a failed candidate reported before its reset in the answer and in the final error', async () => {
    const usageThenReset = (_req: unknown, res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const usage = { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 };
      res.write(`data: ${JSON.stringify({ model: 'x', choices: [], usage })}\n\n`, () =>
        res.socket?.resetAndDestroy(),
      );
    };
    a.handle(usageThenReset);
    b.handle((_req, res) =>
      sendSse(res, openAiChunks('ok', { model: 'b1', usage: { prompt: 10, completion: 5 } })),
    );
    const answer = await router().complete(request({ onDelta: () => undefined }));
    expect(answer.text).to.equal('ok');
    expect(answer.tokensUsed).to.deep.equal({ input: 17, output: 5, total: 22 });

    b.handle(usageThenReset);
    const error = await rejection(router().complete(request({ onDelta: () => undefined })));
    expect(error).to.be.instanceOf(LlmError);
    expect((error as LlmError).spentTokens).to.deep.equal({ input: 14, output: 0, total: 14 });
  });

  it('skips providers without credentials and answers with the first model that works', async () => {
    a.handle((_req, res) => sendJson(res, 500, { error: { message: 'boom' } }));
    b.handle((_req, res) => sendJson(res, 200, openAiAnswer('from beta', { model: 'b1' })));
    const routes: string[] = [];
    const answer = await router().complete(request({ onRoute: (m) => routes.push(m) }));
    expect(answer).to.deep.include({
      text: 'from beta',
      model: 'beta:b1',
      tokensUsed: { input: 10, output: 5, total: 15 },
    });
    expect(routes).to.deep.equal(['alpha:a1', 'beta:b1']);
    expect(a.requests[0]?.body).to.deep.include({
      model: 'a1',
      messages: [
        { role: 'system', content: 'persona' },
        { role: 'user', content: 'do it' },
      ],
    });
  });

  it('opens a failing model circuit, skips it, then a half-open trial closes it again', async () => {
    let now = 0;
    const r = router({ breakerThreshold: 2, breakerCooldownMs: 60_000, now: () => now });
    let alphaFails = true;
    a.handle((_req, res) =>
      alphaFails
        ? sendJson(res, 503, { error: { message: 'overloaded' } })
        : sendJson(res, 200, openAiAnswer('alpha back', { model: 'a1' })),
    );
    b.handle((_req, res) => sendJson(res, 200, openAiAnswer('beta', { model: 'b1' })));
    await r.complete(request());
    await r.complete(request());
    expect(r.breakerState('alpha:a1')).to.equal('open');
    expect(a.requests).to.have.length(2);
    const third = await r.complete(request());
    expect(third.model).to.equal('beta:b1');
    expect(a.requests, 'open circuit: alpha not called').to.have.length(2);
    now = 60_000;
    expect(r.breakerState('alpha:a1')).to.equal('half_open');
    alphaFails = false;
    const trial = await r.complete(request());
    expect(trial.model).to.equal('alpha:a1');
    expect(r.breakerState('alpha:a1')).to.equal('closed');
  });

  it('waits out a short Retry-After on the same model, moves on after a long one', async () => {
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    };
    let calls = 0;
    a.handle((_req, res) => {
      calls++;
      if (calls === 1)
        return sendJson(res, 429, { error: { message: 'slow' } }, { 'retry-after': '2' });
      return sendJson(res, 200, openAiAnswer('after wait', { model: 'a1' }));
    });
    const r = router({ retryAfterMaxMs: 5000, sleep });
    expect((await r.complete(request())).text).to.equal('after wait');
    expect(waits).to.deep.equal([2000]);

    a.handle((_req, res) =>
      sendJson(res, 429, { error: { message: 'slow' } }, { 'retry-after': '30' }),
    );
    b.handle((_req, res) => sendJson(res, 200, openAiAnswer('beta', { model: 'b1' })));
    expect((await r.complete(request())).model).to.equal('beta:b1');
    expect(waits, 'a long Retry-After is not waited').to.deep.equal([2000]);
  });

  it('does not fall back once part of a streamed answer went out', async () => {
    a.handle(async (_req, res) => {
      await sendSse(res, openAiChunks('half an', { parts: 2 }).slice(0, 2), { end: false });
      res.socket?.destroy();
    });
    b.handle((_req, res) => sendSse(res, openAiChunks('beta')));
    const deltas: string[] = [];
    const error = await rejection(router().complete(request({ onDelta: (d) => deltas.push(d) })));
    expect(error).to.be.instanceOf(LlmError);
    expect(error.message).to.match(
      /every model of tier 2 failed: gamma:g1: GAMMA_API_KEY not set; alpha:a1: alpha: /,
    );
    expect(b.requests).to.have.length(0);
    expect(deltas.join('')).to.not.include('beta');
  });

  it('names every model tried and the variables to set when all fail', async () => {
    a.handle((_req, res) => sendJson(res, 401, { error: { message: 'bad key' } }));
    b.handle((_req, res) => sendJson(res, 404, { error: { message: 'no such model' } }));
    const error = await rejection(router().complete(request()));
    expect(error.message).to.equal(
      'every model of tier 2 failed: gamma:g1: GAMMA_API_KEY not set; alpha:a1: alpha: HTTP 401: bad key; beta:b1: beta: HTTP 404: no such model; to use other providers, set OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_API_KEY, GITHUB_TOKEN or OLLAMA_HOST (or AGENTIC_NO_LLM=1 for placeholder answers)',
    );
  });

  it('uses only the pinned model', async () => {
    b.handle((_req, res) => sendJson(res, 500, {}));
    const error = await rejection(router().complete(request({ model: 'beta:pinned' })));
    expect(error.message).to.match(/every model of model beta:pinned failed/);
    expect(a.requests).to.have.length(0);
    expect(b.requests[0]?.body).to.deep.include({ model: 'pinned' });
  });

  it('caps the requests in flight per provider', async () => {
    const release: (() => void)[] = [];
    a.handle(
      (_req, res) =>
        new Promise<void>((resolve) => {
          release.push(() => {
            sendJson(res, 200, openAiAnswer('ok', { model: 'a1' }));
            resolve();
          });
        }),
    );
    const r = router({ maxInFlight: 2, chains: { '2': ['alpha:a1'] } });
    const calls = Array.from({ length: 5 }, () => r.complete(request()));
    while (a.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(a.requests).to.have.length(2);
    while (a.requests.length < 5 || release.length > 0) {
      release.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(calls);
    expect(a.maxActive).to.equal(2);
  });

  it('aborts a call waiting for a slot and a call in flight', async () => {
    a.handle(() => undefined);
    const r = router({ maxInFlight: 1, chains: { '2': ['alpha:a1'] } });
    const first = new AbortController();
    const second = new AbortController();
    const one = r.complete(request({ signal: first.signal }));
    const two = r.complete(request({ signal: second.signal }));
    while (a.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    second.abort(new Error('second cancelled'));
    expect((await rejection(two)).message).to.equal('second cancelled');
    const closed = a.clientClosed();
    first.abort(new Error('first cancelled'));
    expect((await rejection(one)).message).to.equal('first cancelled');
    await closed;
    expect(r.breakerState('alpha:a1'), 'a cancellation is not a failure').to.equal('closed');
  });
});
