import { expect } from 'chai';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createLlmRouter } from '../../../src/llm/router.js';
import type { Provider } from '../../../src/llm/types.js';
import { createLlmCallObserver, createServiceMetrics } from '../../../src/metrics/index.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';
import { sampleValue } from '../../http/metrics-scrape.js';

describe('LLM metrics (router over fake OpenAI-compatible servers on 127.0.0.1)', () => {
  let a: FakeServer;
  let b: FakeServer;
  const clients: HttpClient[] = [];

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
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await a.close();
    await b.close();
  });

  it('counts calls, latency and tokens by provider, model and outcome, and breaker states', async () => {
    a.handle((_req, res) => sendJson(res, 500, { error: { message: 'boom' } }));
    b.handle((_req, res) =>
      sendJson(res, 200, openAiAnswer('ok', { model: 'b1', usage: { prompt: 7, completion: 3 } })),
    );
    const providers = new Map([
      ['alpha', providerFor('alpha', a)],
      ['beta', providerFor('beta', b)],
    ]);
    const metrics = createServiceMetrics({ processDefaults: false });
    const router = createLlmRouter({
      providers: { get: (name) => providers.get(name), missing: () => undefined },
      chains: { '2': ['alpha:a1', 'beta:b1'] },
      breakerThreshold: 1,
      onCall: createLlmCallObserver(metrics),
    });
    metrics.readGauges({ breakers: () => router.breakerStates() });
    const ask = () =>
      router.complete({ tier: 2, system: '', prompt: 'hi', signal: new AbortController().signal });
    await ask();
    await ask(); // alpha's circuit is open now: skipped, not called

    const text = await metrics.registry.metrics();
    const alpha = { provider: 'alpha', model: 'alpha:a1' };
    const beta = { provider: 'beta', model: 'beta:b1' };
    expect(
      sampleValue(text, 'agentic_llm_calls_total', { ...alpha, outcome: 'transient' }),
    ).to.equal(1);
    expect(sampleValue(text, 'agentic_llm_calls_total', { ...beta, outcome: 'success' })).to.equal(
      2,
    );
    expect(
      sampleValue(text, 'agentic_llm_call_duration_seconds_count', { ...beta, outcome: 'success' }),
    ).to.equal(2);
    expect(sampleValue(text, 'agentic_llm_tokens_total', { ...beta, direction: 'input' })).to.equal(
      14,
    );
    expect(
      sampleValue(text, 'agentic_llm_tokens_total', { ...beta, direction: 'output' }),
    ).to.equal(6);
    expect(
      sampleValue(text, 'agentic_llm_breaker_state', { model: 'alpha:a1', state: 'open' }),
    ).to.equal(1);
    expect(
      sampleValue(text, 'agentic_llm_breaker_state', { model: 'beta:b1', state: 'closed' }),
    ).to.equal(1);
    expect(
      sampleValue(text, 'agentic_llm_breaker_state', { model: 'alpha:a1', state: 'closed' }),
    ).to.equal(0);
  });
});
