import { expect } from 'chai';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  TraceFlags,
  trace,
  isSpanContextValid,
} from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { createRuntime } from '../../../src/index.js';
import { ATTR } from '../../../src/tracing/index.js';
import type { WorkflowDocument } from '../../../src/workflow/types.js';

const WORKFLOW: WorkflowDocument = {
  name: 'embedded',
  steps: [
    { name: 'first', agent: 'tier0_echo', inputs: { text: 'secret-input' } },
    { name: 'ask', agent: 'tier2_writer', depends_on: ['first'], inputs: { text: 'secret-input' } },
  ],
};

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('createRuntime({ tracerProvider }) (embedding)', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  });
  afterEach(() => provider.shutdown());

  for (const adapter of ['native', 'graph'] as const) {
    it(`traces a ${adapter} run under the app's span into the app's provider`, async () => {
      const runtime = createRuntime({ persist: false, noLlm: true, tracerProvider: provider });
      const appSpan = provider.getTracer('app').startSpan('app work');
      const record = await runtime.run({
        workflow: WORKFLOW,
        adapter,
        runId: `embedded-${adapter}`,
        traceContext: trace.setSpan(ROOT_CONTEXT, appSpan),
      });
      appSpan.end();
      await runtime.shutdown();
      expect(record.status).to.equal('success');
      const spans = exporter.getFinishedSpans();
      const named = (name: string) => {
        const found = spans.filter((span) => span.name === name);
        expect(found, name).to.have.length(1);
        return found[0]!;
      };
      const run = named('run embedded');
      expect(parentOf(run)).to.equal(appSpan.spanContext().spanId);
      expect(run.spanContext().traceId).to.equal(appSpan.spanContext().traceId);
      expect(run.attributes).to.include({
        [ATTR.RUN_ID]: `embedded-${adapter}`,
        [ATTR.ADAPTER]: adapter,
        [ATTR.STATUS]: 'success',
      });
      expect(run.instrumentationScope.name).to.equal('agentic-runtime');
      const first = named('step first');
      const ask = named('step ask');
      expect([parentOf(first), parentOf(ask)]).to.deep.equal([
        run.spanContext().spanId,
        run.spanContext().spanId,
      ]);
      expect(ask.attributes).to.include({ [ATTR.ATTEMPT]: 1, [ATTR.STATUS]: 'success' });
      const chat = named('chat placeholder');
      expect(parentOf(chat)).to.equal(ask.spanContext().spanId);
      expect(chat.status.code).to.equal(SpanStatusCode.UNSET);
      // The model call lies within its step, the steps within the run: up to the SDK's clock
      // skew between spans (each anchors its clock on Date.now(), whole milliseconds).
      const ns = (t: [number, number]) => t[0] * 1e9 + t[1];
      const skew = 1e6;
      expect(ns(chat.startTime)).to.be.at.least(ns(ask.startTime) - skew);
      expect(ns(ask.endTime)).to.be.at.most(ns(run.endTime) + skew);
      expect(JSON.stringify(spans.map((span) => span.attributes))).not.to.include('secret-input');
    });
  }

  it('makes no spans for a run whose trace is sampled out', async () => {
    const runtime = createRuntime({ persist: false, noLlm: true, tracerProvider: provider });
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.NONE,
    });
    const record = await runtime.run({ workflow: WORKFLOW, traceContext: unsampled });
    await runtime.shutdown();
    expect(record.status).to.equal('success');
    expect(exporter.getFinishedSpans()).to.deep.equal([]);
  });

  it('registers no global provider', async () => {
    const runtime = createRuntime({ persist: false, noLlm: true, tracerProvider: provider });
    await runtime.run({ workflow: WORKFLOW });
    await runtime.shutdown();
    const globalSpan = trace.getTracer('anyone').startSpan('global');
    expect(isSpanContextValid(globalSpan.spanContext())).to.equal(false);
    globalSpan.end();
  });
});
