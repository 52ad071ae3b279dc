import { expect } from 'chai';
import { sendJson, startFakeServer, type FakeServer } from '../fixtures/llm/fake-server.js';
import { call, startTestService, type TestService } from './harness.js';

interface TiersBody {
  tiers: {
    tier: string;
    models: { model: string; provider: string; circuit: string; retry_in_ms: number }[];
  }[];
  providers: { provider: string; circuit: string }[];
}

describe('GET /api/models/tiers', () => {
  let openai: FakeServer;
  let service: TestService | undefined;
  beforeEach(async () => {
    openai = await startFakeServer();
    // Lists its models; fails every chat with a 500 (the model's circuit counts it).
    openai.handle((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [{ id: 'gpt-x' }] });
      return sendJson(res, 500, { error: { message: 'boom' } });
    });
  });
  afterEach(async () => {
    await service?.dispose();
    service = undefined;
    await openai.close();
  });

  it('answers the tier chains in order with every model closed before any call', async () => {
    service = await startTestService({
      env: {
        AGENTIC_MODEL_TIER_1: 'ollama:qwen2.5:7b',
        AGENTIC_MODEL_TIER_2: 'ollama:not-pulled,openai:gpt-x',
      },
    });
    const res = await call(service.url, 'GET', '/api/models/tiers');
    expect(res.status, res.text).to.equal(200);
    const body = res.body as TiersBody;
    expect(body.tiers.map((t) => t.tier)).to.deep.equal(['1', '2', '3', '4', '5']);
    expect(body.tiers[1]).to.deep.equal({
      tier: '2',
      models: [
        { model: 'ollama:not-pulled', provider: 'ollama', circuit: 'closed', retry_in_ms: 0 },
        { model: 'openai:gpt-x', provider: 'openai', circuit: 'closed', retry_in_ms: 0 },
      ],
    });
    // Every provider the chains name, each with its connection circuit (the start-up probe may
    // have found one unreachable on this machine: open).
    expect(body.providers.map((p) => p.provider)).to.include.members(['ollama', 'openai']);
    for (const p of body.providers) expect(['closed', 'open', 'half_open']).to.include(p.circuit);
  });

  it('shows a model whose circuit opened after failed calls, with its cool-down', async () => {
    service = await startTestService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        OPENAI_API_KEY: 'sk-test-key-0123456789abcdef',
        AGENTIC_MODEL_TIER_2: 'openai:gpt-x',
        AGENTIC_LLM_BREAKER_THRESHOLD: '1',
        AGENTIC_LLM_BREAKER_COOLDOWN_SECONDS: '600',
        AGENTIC_LLM_RETRY_AFTER_MAX_SECONDS: '0',
      },
    });
    const chat = await fetch(`${service.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], tier: 2 }),
    });
    expect(await chat.text()).to.include('"type":"error"');
    const body = (await call(service.url, 'GET', '/api/models/tiers')).body as TiersBody;
    const model = body.tiers[1]?.models[0];
    expect(model).to.include({ model: 'openai:gpt-x', circuit: 'open' });
    expect(model?.retry_in_ms).to.be.above(500_000).and.at.most(600_000);
  });
});
