import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, shippedModelsFile } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';
import { loadTierChains, LLM_TIERS } from '../../../src/llm/model-chains.js';
import { createLlmService } from '../../../src/llm/llm-service.js';

describe('LLM configuration', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-llm-config-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads AGENTIC_MODEL_TIER_<N> for any tier as a comma list of model ids', () => {
    const config = loadConfig(
      {
        AGENTIC_MODEL_TIER_4: ' openai:gpt-4.1 , ollama:qwen2.5:7b ',
        AGENTIC_MODEL_TIER_1: 'gemini:x',
      },
      dir,
    );
    expect(config.llm.tierOverrides).to.deep.equal({
      '1': ['gemini:x'],
      '4': ['openai:gpt-4.1', 'ollama:qwen2.5:7b'],
    });
  });

  it('rejects a tier outside 1-5 and ids without a provider, naming the variable', () => {
    let error: unknown;
    try {
      loadConfig({ AGENTIC_MODEL_TIER_7: 'openai:x', AGENTIC_MODEL_TIER_2: 'gpt-4' }, dir);
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).problems).to.deep.equal([
      'AGENTIC_MODEL_TIER_7: tiers are 1 to 5',
      'AGENTIC_MODEL_TIER_2="gpt-4": gpt-4 is not a provider:model id (e.g. openai:gpt-4.1-mini, ollama:qwen2.5:7b)',
    ]);
  });

  it('has documented defaults for the breaker, timeouts and provider URLs', () => {
    const { llm } = loadConfig({}, dir);
    expect(llm.setting('OPENAI_BASE_URL')).to.equal('https://api.openai.com/v1');
    expect(llm.isSet('OPENAI_BASE_URL')).to.equal(false);
    expect(llm.setting('OLLAMA_HOST')).to.equal('http://127.0.0.1:11434');
    expect(llm).to.deep.include({
      breakerThreshold: 3,
      breakerCooldownMs: 60_000,
      retryAfterMaxMs: 10_000,
      maxInFlight: 16,
      probeTimeoutMs: 2000,
      maxAnswerBytes: 33_554_432,
      idleTimeoutMs: 60_000,
      callTimeoutMs: 600_000,
    });
    expect(loadConfig({}, dir).stepTimeoutMs).to.equal(1_800_000);
    expect(
      loadConfig({ AGENTIC_STEP_TIMEOUT_SECONDS: '2.5', AGENTIC_LLM_IDLE_TIMEOUT_MS: '1500' }, dir),
    ).to.deep.include({ stepTimeoutMs: 2500 });
    expect(llm.secrets.get('OPENAI_API_KEY')).to.equal(undefined);
    expect(JSON.stringify(loadConfig({ OPENAI_API_KEY: 'sk-secret-value' }, dir))).to.not.include(
      'sk-secret-value',
    );
  });

  it('ships a chain for every tier, each id a provider:model', () => {
    const chains = loadTierChains(shippedModelsFile());
    for (const tier of LLM_TIERS) expect(chains[tier], `tier ${tier}`).to.have.length.above(0);
  });

  it('rejects a models file with a bad id, naming the file', async () => {
    const file = join(dir, 'models.yaml');
    await writeFile(file, 'tiers:\n  2: [gpt-4]\n');
    expect(() => loadTierChains(file)).to.throw(
      `models file ${file}: tier 2: gpt-4 is not a provider:model id`,
    );
  });

  it('replaces a tier chain with its override and lists providers without credentials', async () => {
    const file = join(dir, 'models.yaml');
    await writeFile(file, 'tiers:\n  1: [openai:a]\n  2: [openai:b]\n');
    const service = createLlmService(
      loadConfig(
        { AGENTIC_MODELS_FILE: file, AGENTIC_MODEL_TIER_2: 'anthropic:c', ANTHROPIC_API_KEY: 'k' },
        dir,
      ).llm,
    );
    try {
      expect(service.chains).to.deep.equal({ '1': ['openai:a'], '2': ['anthropic:c'] });
      expect(service.providers.configured().map((p) => p.name)).to.deep.equal([
        'anthropic',
        'ollama',
      ]);
      expect(service.providers.missing('openai')).to.equal(
        'OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) not set',
      );
    } finally {
      await service.close();
    }
  });
});
