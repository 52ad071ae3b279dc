import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/index.js';
import { AppError } from '../../../src/errors.js';
import { callCostUsd, loadPriceTable, type PriceTable } from '../../../src/llm/prices.js';
import { parseModelId } from '../../../src/llm/model-id.js';
import { loadTierChains } from '../../../src/llm/model-chains.js';
import { shippedModelsFile } from '../../../src/config/package-info.js';

describe('price table (agents/prices.yaml, AGENTIC_PRICES_FILE)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-prices-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function table(yaml: string): Promise<PriceTable> {
    const file = join(dir, 'prices.yaml');
    await writeFile(file, yaml);
    return loadPriceTable(file);
  }

  async function problem(yaml: string): Promise<string> {
    try {
      await table(yaml);
    } catch (error) {
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).code).to.equal('config_error');
      return (error as Error).message;
    }
    throw new Error('accepted');
  }

  const TABLE = `as_of: "2026-01-01"
models:
  "openai:gpt-x": { input: 2, cached_input: 0.5, output: 8 }
  "anthropic:claude-x": { input: 3, cached_input: 0.3, cache_write_input: 3.75, output: 15 }
  "gemini:long":
    input: 1.25
    output: 10
    long_context: { above_input_tokens: 200000, input: 2.5, output: 15 }
  "ollama:*": { input: 0, output: 0 }
`;

  it('prices a call per million tokens: input, output', async () => {
    const prices = await table(TABLE);
    expect(prices.asOf).to.equal('2026-01-01');
    expect(
      callCostUsd(prices, 'openai:gpt-x', { input: 1_000_000, output: 500_000, total: 1_500_000 }),
    ).to.equal(6);
    expect(
      callCostUsd(prices, 'openai:gpt-x', { input: 1200, output: 300, total: 1500 }),
    ).to.be.closeTo(0.0048, 1e-12);
  });

  it('prices cached input tokens (a part of input) at the cached price', async () => {
    const prices = await table(TABLE);
    // 1M input of which 600k cached: 400k × 2 + 600k × 0.5 = 0.8 + 0.3
    expect(
      callCostUsd(prices, 'openai:gpt-x', {
        input: 1_000_000,
        cached: 600_000,
        output: 0,
        total: 1_000_000,
      }),
    ).to.be.closeTo(1.1, 1e-12);
    // Anthropic's cache writes at their own price
    expect(
      callCostUsd(prices, 'anthropic:claude-x', {
        input: 1_000_000,
        cached: 500_000,
        cacheWrite: 100_000,
        output: 0,
        total: 1_000_000,
      }),
    ).to.be.closeTo(0.4 * 3 + 0.5 * 0.3 + 0.1 * 3.75, 1e-12);
  });

  it('is null for a model without a price, and for cached tokens without a cached price', async () => {
    const prices = await table(TABLE);
    expect(
      callCostUsd(prices, 'openai:gpt-unknown', { input: 10, output: 10, total: 20 }),
    ).to.equal(null);
    expect(callCostUsd(prices, 'not-an-id', { input: 10, output: 10, total: 20 })).to.equal(null);
    expect(
      callCostUsd(prices, 'gemini:long', { input: 10, cached: 5, output: 10, total: 20 }),
    ).to.equal(null);
    expect(
      callCostUsd(prices, 'openai:gpt-x', { input: 10, cacheWrite: 5, output: 10, total: 20 }),
    ).to.equal(null);
  });

  it('applies the long-context prices to a call whose input is over the threshold', async () => {
    const prices = await table(TABLE);
    expect(
      callCostUsd(prices, 'gemini:long', { input: 200_000, output: 0, total: 200_000 }),
    ).to.be.closeTo(0.25, 1e-12);
    expect(
      callCostUsd(prices, 'gemini:long', { input: 300_000, output: 100_000, total: 400_000 }),
    ).to.be.closeTo(0.75 + 1.5, 1e-12);
  });

  it('prices every model of a provider with `provider:*` when the model has no line', async () => {
    const prices = await table(TABLE);
    expect(
      callCostUsd(prices, 'ollama:qwen2.5:7b', { input: 5000, output: 100, total: 5100 }),
    ).to.equal(0);
  });

  it('names the file and the key of each mistake', async () => {
    const message = await problem(`models:
  "openai:gpt-x": { input: -1, output: 8, cached: 1 }
  "anthropic:claude-x": { output: 15 }
`);
    expect(message).to.match(/^price table .*prices\.yaml: /);
    expect(message).to.include('models.openai:gpt-x.input: must be >= 0');
    expect(message).to.include('models.openai:gpt-x.cached: must NOT have additional properties');
    expect(message).to.include('models.anthropic:claude-x.input: required');
  });

  it('rejects a key that is not a provider:model id, and a file that is not YAML', async () => {
    expect(await problem(`models:\n  gpt-4: { input: 1, output: 1 }\n`)).to.include(
      'models.gpt-4: not a provider:model id',
    );
    expect(await problem(`models: [\n`)).to.match(/^price table .*prices\.yaml: /);
    expect(await problem(`prices: {}\n`)).to.include('models: required');
    try {
      loadPriceTable(join(dir, 'missing.yaml'));
      expect.fail('accepted');
    } catch (error) {
      expect((error as Error).message).to.match(/^price table .*missing\.yaml: .*ENOENT/);
    }
  });

  it('AGENTIC_PRICES_FILE is resolved by the config; unset: the shipped agents/prices.yaml', async () => {
    const file = join(dir, 'mine.yaml');
    await writeFile(file, TABLE);
    expect(loadConfig({ AGENTIC_PRICES_FILE: file }).pricesFile).to.equal(file);
    expect(loadConfig({}).pricesFile).to.match(/agents\/prices\.yaml$/);
  });

  it('the shipped table loads, dated, and prices only models the chains name (or provider:*)', () => {
    const prices = loadPriceTable(loadConfig({}).pricesFile);
    expect(prices.asOf).to.match(/^\d{4}-\d{2}-\d{2}$/);
    const chained = new Set(Object.values(loadTierChains(shippedModelsFile())).flat());
    for (const id of prices.models.keys()) {
      const ref = parseModelId(id);
      expect(ref, id).to.not.equal(undefined);
      if (ref!.model !== '*')
        expect(chained.has(id) || /-\d{8}$|-\d{4}-\d{2}-\d{2}$/.test(id), id).to.equal(true);
    }
    expect(
      callCostUsd(prices, 'openai:gpt-4.1-mini', {
        input: 1_000_000,
        output: 1_000_000,
        total: 2_000_000,
      }),
    ).to.be.a('number');
    // Azure prices depend on the deployment: never guessed.
    expect(callCostUsd(prices, 'azure:gpt-4.1', { input: 1, output: 1, total: 2 })).to.equal(null);
  });
});
