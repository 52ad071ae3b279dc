import { expect } from 'chai';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  createLlmRouter,
  LlmError,
  parsePriceTable,
  type LlmCallReport,
  type LlmRequest,
  type Provider,
  type TokenUsage,
} from '../../../src/llm/index.js';
import { ATTR, traceModelCalls } from '../../../src/tracing/index.js';

const PRICES = parsePriceTable(
  {
    models: {
      'alpha:a1': { input: 2, cached_input: 0.5, output: 8 },
      // Priced under its dated snapshot name only.
      'beta:b1-2025-01-01': { input: 1, output: 1 },
    },
  },
  'test-prices.yaml',
);

/** A provider answering each call with `usage` (as `answeredAs`), or failing with `error` first. */
function provider(
  name: string,
  usage: TokenUsage,
  options: { answeredAs?: string; failFirst?: LlmError } = {},
): Provider {
  let failed = options.failFirst === undefined;
  return {
    name,
    chat: ({ model }) => {
      if (!failed) {
        failed = true;
        return Promise.reject(options.failFirst!);
      }
      return Promise.resolve({
        text: 'ok',
        model: options.answeredAs ?? model,
        usage,
        finishReason: 'stop',
        toolCalls: [],
      });
    },
    listModels: () => Promise.resolve([]),
  };
}

const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
  tier: 1,
  system: 's',
  prompt: 'p',
  signal: new AbortController().signal,
  ...extra,
});

describe('the router prices each call (price table)', () => {
  const USAGE = { input: 1_000_000, cached: 400_000, output: 100_000, total: 1_100_000 };

  function router(providers: Provider[], chain: string[], reports: LlmCallReport[] = []) {
    const byName = new Map(providers.map((p) => [p.name, p]));
    return createLlmRouter({
      providers: { get: (name) => byName.get(name), missing: () => undefined },
      chains: { '1': chain },
      prices: PRICES,
      onCall: (report) => reports.push(report),
      sleep: () => Promise.resolve(),
    });
  }

  it('prices a call by the id asked for: cached tokens at the cached price', async () => {
    const reports: LlmCallReport[] = [];
    const answer = await router([provider('alpha', USAGE)], ['alpha:a1'], reports).complete(
      request(),
    );
    // 600k × 2 + 400k × 0.5 + 100k × 8 = 1.2 + 0.2 + 0.8
    expect(answer.tokensUsed).to.deep.equal({ ...USAGE, costUsd: 2.2 });
    expect(reports.map((r) => [r.outcome, r.usage?.costUsd])).to.deep.equal([['success', 2.2]]);
  });

  it('falls back to the id that answered (a dated snapshot), and is null when neither has a price', async () => {
    const plain = { input: 1_000_000, output: 1_000_000, total: 2_000_000 };
    const snap = await router(
      [provider('beta', plain, { answeredAs: 'b1-2025-01-01' })],
      ['beta:b1'],
    ).complete(request());
    expect(snap.tokensUsed.costUsd).to.equal(2);
    const unknown = await router([provider('beta', plain)], ['beta:b1']).complete(request());
    expect(unknown.tokensUsed.costUsd).to.equal(null);
  });

  it("adds a failed call's spent tokens and their cost to the answer's", async () => {
    const spent = new LlmError('transient', 'reset', { provider: 'alpha' });
    spent.spentTokens = { input: 500_000, output: 0, total: 500_000 };
    const reports: LlmCallReport[] = [];
    const answer = await router(
      [
        provider('alpha', USAGE, { failFirst: spent }),
        provider('beta', { input: 0, output: 0, total: 0 }),
      ],
      ['alpha:a1', 'beta:b1'],
      reports,
    ).complete(request());
    expect(answer.model).to.equal('beta:b1');
    // 1.0 spent on alpha, and beta's (unpriced, no tokens) answer: unknown overall.
    expect(answer.tokensUsed).to.deep.include({ input: 500_000, costUsd: null });
    expect(reports.map((r) => [r.model, r.outcome, r.usage?.costUsd])).to.deep.equal([
      ['alpha:a1', 'transient', 1],
      ['beta:b1', 'success', null],
    ]);
  });

  it('puts the cost (and cached tokens) on the chat span; no attribute when unknown', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const traced = (r: ReturnType<typeof router>) =>
      traceModelCalls(r, {
        tracer: tracing.getTracer('test'),
        sensitive: false,
        parentOf: () => ROOT_CONTEXT,
      });
    await traced(router([provider('alpha', USAGE)], ['alpha:a1'])).complete(request());
    await traced(router([provider('beta', USAGE)], ['beta:b1'])).complete(request());
    const [priced, unpriced] = exporter.getFinishedSpans();
    expect(priced!.attributes).to.include({
      [ATTR.COST_USD]: 2.2,
      [ATTR.CACHED_INPUT_TOKENS]: 400_000,
    });
    expect(unpriced!.attributes).to.not.have.property(ATTR.COST_USD);
    await tracing.shutdown();
  });
});
