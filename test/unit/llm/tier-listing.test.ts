import { expect } from 'chai';
import { loadConfig } from '../../../src/config/index.js';
import { isAppError } from '../../../src/errors.js';
import { createLlmService, type LlmService } from '../../../src/llm/llm-service.js';
import type { LlmRequest } from '../../../src/llm/types.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';
import { rejection } from '../../support/rejection.js';

/**
 * The shipped tier chains name hosted models (`openai:gpt-4.1`, `openai:o3`, ...); a local
 * OpenAI-compatible server set by OPENAI_BASE_URL lists only its own models at GET /v1/models,
 * and Ollama only the models pulled (GET /api/tags).
 */
describe('tier chains after the probe (local OpenAI-compatible server and Ollama on 127.0.0.1)', () => {
  let local: FakeServer;
  let ollama: FakeServer;
  let service: LlmService | undefined;
  let localLists = true;
  let pulled: string[] = [];
  let now = 0;

  beforeEach(async () => {
    localLists = true;
    pulled = [];
    now = 1_000_000;
    local = await startFakeServer((req, res) => {
      if (req.method === 'GET') {
        return localLists
          ? sendJson(res, 200, { object: 'list', data: [{ id: 'local-model', object: 'model' }] })
          : sendJson(res, 500, { error: { message: 'listing broke' } });
      }
      const model = (req.body as { model: string }).model;
      if (model !== 'local-model') {
        return sendJson(res, 404, { error: { message: `model ${model} does not exist` } });
      }
      return sendJson(res, 200, openAiAnswer('from the local server', { model }));
    });
    ollama = await startFakeServer((req, res) => {
      if (req.method === 'GET') {
        return sendJson(res, 200, { models: pulled.map((name) => ({ name })) });
      }
      const model = (req.body as { model: string }).model;
      if (!pulled.includes(model)) {
        return sendJson(res, 404, { error: { message: `model "${model}" not found` } });
      }
      return sendJson(res, 200, openAiAnswer('from ollama', { model }));
    });
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
    await Promise.all([local.close(), ollama.close()]);
  });

  const start = (env: Record<string, string> = {}): LlmService =>
    (service = createLlmService(
      loadConfig({ OPENAI_BASE_URL: `${local.url}/v1`, OLLAMA_HOST: ollama.url, ...env }, '/tmp')
        .llm,
      { now: () => now },
    ));
  const request = (tier: number): LlmRequest => ({
    tier,
    system: '',
    prompt: 'hi',
    signal: new AbortController().signal,
  });
  const posted = (): string[] =>
    [...local.requests, ...ollama.requests]
      .filter((r) => r.method === 'POST')
      .map((r) => (r.body as { model: string }).model);

  it('skips the models the probe found unlisted and says so per tier in the probe result', async () => {
    const llm = start({ AGENTIC_MODEL_TIER_2: 'openai:gpt-4.1-mini,openai:local-model' });
    const probe = await llm.probe();
    expect(probe.tier_defaults['2']).to.equal('openai:local-model');
    expect(probe.skipped_models['2']).to.deep.equal([
      { model: 'openai:gpt-4.1-mini', reason: 'not listed by openai' },
    ]);
    expect(probe.skipped_models['1']).to.deep.include({
      model: 'ollama:qwen2.5:3b',
      reason: 'not listed by ollama',
    });
    const answer = await llm.router.complete(request(2));
    expect(answer.model).to.equal('openai:local-model');
    expect(posted(), 'the unlisted model is not asked').to.deep.equal(['local-model']);
  });

  it('a tier whose every model is skipped fails with one message naming the tier, the models and why', async () => {
    const llm = start();
    await llm.probe();
    const error = await rejection(llm.router.complete(request(5)));
    expect(isAppError(error) && error.code).to.equal('llm_not_configured');
    expect(error.message).to.equal(
      'no model of tier 5 can be used: anthropic:claude-opus-4-1: ANTHROPIC_API_KEY not set; ' +
        'openai:o3: not listed by openai; ' +
        'gemini:gemini-2.5-pro: GEMINI_API_KEY (or GOOGLE_API_KEY) not set; ' +
        'azure:gpt-4.1: AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY not set. ' +
        'openai lists local-model: name one in AGENTIC_MODEL_TIER_5 (e.g. AGENTIC_MODEL_TIER_5=openai:local-model) or in the models file',
    );
    expect(posted(), 'no provider asked').to.deep.equal([]);
  });

  it('without a list from the probe (none yet, or the list request failed) the chain is tried as before', async () => {
    const llm = start({ AGENTIC_MODEL_TIER_2: 'openai:gpt-4.1-mini,openai:local-model' });
    expect((await llm.router.complete(request(2))).model).to.equal('openai:local-model');
    expect(posted()).to.deep.equal(['gpt-4.1-mini', 'local-model']);
    localLists = false;
    const probe = await llm.probe();
    expect(probe.unavailable_providers).to.include('openai');
    expect(probe.skipped_models['2']).to.equal(undefined);
    expect((await llm.router.complete(request(2))).model).to.equal('openai:local-model');
    expect(posted()).to.deep.equal(['gpt-4.1-mini', 'local-model', 'gpt-4.1-mini', 'local-model']);
  });

  it('a model pulled after the probe is used once the probe is a minute old (one re-probe, not one per request)', async () => {
    const llm = start({ AGENTIC_MODEL_TIER_1: 'ollama:qwen2.5:3b,openai:local-model' });
    await llm.probe();
    const probes = (): number => ollama.requests.filter((r) => r.method === 'GET').length;
    expect((await llm.router.complete(request(1))).model).to.equal('openai:local-model');
    pulled = ['qwen2.5:3b'];
    expect((await llm.router.complete(request(1))).model).to.equal('openai:local-model');
    expect(probes(), 'a fresh probe is not repeated').to.equal(1);
    now += 60_000;
    const answers = await Promise.all([1, 2, 3].map(() => llm.router.complete(request(1))));
    expect(answers.map((a) => a.model)).to.deep.equal([
      'ollama:qwen2.5:3b',
      'ollama:qwen2.5:3b',
      'ollama:qwen2.5:3b',
    ]);
    expect(probes(), 'one re-probe for the three requests').to.equal(2);
    expect(posted()).to.deep.equal([
      'local-model',
      'local-model',
      'qwen2.5:3b',
      'qwen2.5:3b',
      'qwen2.5:3b',
    ]);
  });

  it('a pinned model is asked even when the probe did not list it', async () => {
    const llm = start();
    await llm.probe();
    const error = await rejection(
      llm.router.complete({ ...request(2), model: 'openai:gpt-4.1-mini' }),
    );
    expect(error.message).to.match(/HTTP 404: model gpt-4\.1-mini does not exist/);
    expect(posted()).to.deep.equal(['gpt-4.1-mini']);
  });
});
