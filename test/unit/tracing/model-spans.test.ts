import { expect } from 'chai';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  createLlmRouter,
  createNoLlmClient,
  LlmError,
  type LlmRequest,
  type Provider,
} from '../../../src/llm/index.js';
import { ATTR, traceModelCalls } from '../../../src/tracing/index.js';

/** A provider answering from a script: an error to throw, or the text to answer, per call. */
function scripted(name: string, script: (LlmError | string)[]): Provider {
  return {
    name,
    chat: ({ model }) => {
      const next = script.shift();
      if (next === undefined || next instanceof LlmError) {
        return Promise.reject(next ?? new Error('script used up'));
      }
      return Promise.resolve({
        text: next,
        model,
        usage: { input: 3, output: 2, total: 5 },
        finishReason: 'stop',
        toolCalls: [],
      });
    },
    listModels: () => Promise.resolve([]),
  };
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('traceModelCalls', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  });
  afterEach(() => provider.shutdown());

  const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
    tier: 2,
    system: 'persona',
    prompt: 'do it',
    signal: new AbortController().signal,
    caller: { runId: 'run-1', step: 'ask' },
    ...extra,
  });

  it("makes a span per provider call of the router, each a child of the caller's context", async () => {
    const providers = new Map([
      [
        'alpha',
        scripted('alpha', [
          new LlmError('rate_limited', 'HTTP 429', { provider: 'alpha', retryAfterMs: 5 }),
          new LlmError('transient', 'HTTP 500', { provider: 'alpha' }),
        ]),
      ],
      ['beta', scripted('beta', ['from beta'])],
    ]);
    const router = createLlmRouter({
      providers: { get: (name) => providers.get(name), missing: () => undefined },
      chains: { '2': ['alpha:a1', 'beta:b1'] },
      sleep: () => Promise.resolve(),
    });
    const parent = provider.getTracer('test').startSpan('step ask');
    const tried: string[] = [];
    const traced = traceModelCalls(router, {
      tracer: provider.getTracer('test'),
      sensitive: false,
      parentOf: () => trace.setSpan(ROOT_CONTEXT, parent),
    });
    const answer = await traced.complete(
      // The caller's own hook still hears of every call.
      request({
        onAttempt: (model) => (outcome) => tried.push(`${model} ${'response' in outcome}`),
      }),
    );
    parent.end();
    expect(answer.text).to.equal('from beta');
    expect(tried).to.deep.equal(['alpha:a1 false', 'alpha:a1 false', 'beta:b1 true']);

    const calls = exporter.getFinishedSpans().filter((span) => span.name !== 'step ask');
    // The call repeated after the Retry-After wait is a provider call of its own.
    expect(calls.map((span) => [span.name, span.attributes[ATTR.STATUS]])).to.deep.equal([
      ['chat alpha:a1', 'rate_limited'],
      ['chat alpha:a1', 'transient'],
      ['chat beta:b1', 'success'],
    ]);
    for (const span of calls) expect(parentOf(span)).to.equal(parent.spanContext().spanId);
    expect(calls[1]!.attributes).to.deep.equal({
      [ATTR.GEN_AI_OPERATION]: 'chat',
      [ATTR.GEN_AI_REQUEST_MODEL]: 'alpha:a1',
      [ATTR.GEN_AI_PROVIDER]: 'alpha',
      [ATTR.TIER]: 2,
      [ATTR.RUN_ID]: 'run-1',
      [ATTR.STEP]: 'ask',
      [ATTR.STATUS]: 'transient',
      [ATTR.ERROR_TYPE]: 'transient',
    });
    expect(calls[1]!.status).to.deep.equal({
      code: SpanStatusCode.ERROR,
      message: 'alpha: HTTP 500',
    });
    expect(calls[2]!.attributes).to.include({
      [ATTR.GEN_AI_RESPONSE_MODEL]: 'beta:b1',
      [ATTR.GEN_AI_INPUT_TOKENS]: 3,
      [ATTR.GEN_AI_OUTPUT_TOKENS]: 2,
    });
    expect(calls[2]!.status.code).to.equal(SpanStatusCode.UNSET);
  });

  it('makes one span for a call of a client that reports no provider calls', async () => {
    const traced = traceModelCalls(createNoLlmClient(), {
      tracer: provider.getTracer('test'),
      sensitive: true,
      parentOf: () => undefined,
    });
    await traced.complete(request());
    const [span, ...others] = exporter.getFinishedSpans();
    expect(others).to.deep.equal([]);
    expect(span!.name).to.equal('chat placeholder');
    expect(span!.attributes).to.include({
      [ATTR.GEN_AI_PROVIDER]: 'placeholder',
      [ATTR.STATUS]: 'success',
      [ATTR.PROMPT]: 'do it',
      [ATTR.SYSTEM_PROMPT]: 'persona',
    });
    expect(span!.attributes[ATTR.COMPLETION]).to.match(/^\[placeholder tier2 response/);
  });

  it('makes one failed span when the router could try no candidate', async () => {
    const router = createLlmRouter({
      providers: { get: () => undefined, missing: () => 'ALPHA_API_KEY not set' },
      chains: { '2': ['alpha:a1'] },
    });
    const traced = traceModelCalls(router, {
      tracer: provider.getTracer('test'),
      sensitive: false,
      parentOf: () => undefined,
    });
    let failure: unknown;
    await traced.complete(request()).catch((error: unknown) => (failure = error));
    expect(String(failure)).to.include('ALPHA_API_KEY not set');
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.attributes[ATTR.STATUS]])).to.deep.equal([
      ['chat tier2', 'error'],
    ]);
    expect(spans[0]!.status.code).to.equal(SpanStatusCode.ERROR);
  });
});
