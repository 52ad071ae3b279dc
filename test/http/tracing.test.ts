import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageVersion } from '../../src/config/index.js';
import { ATTR, OTLP_EXPORT_TIMEOUT_MS } from '../../src/tracing/index.js';
import { call, startTestService, type TestService } from './harness.js';
import {
  startGrpcReceiver,
  startHttpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from './otlp-receiver.js';

/** In the run's input; it reaches the tool arguments and the model prompt, nothing else. */
const MARKER = 'do-not-trace-7f3a';

const TRACED = `name: traced
description: A tool call, a model call after it, and a step that fails twice.
inputs:
  note:
    type: string
steps:
  - name: remember
    agent: tier0_tool
    description: Keep the note.
    tools: [memory_set]
    inputs: { tool: memory_set, args: { key: note, value: "\${inputs.note}" } }
  - name: summarize
    agent: tier1_summarizer
    description: Summarize the note.
    depends_on: [remember]
    inputs: { text: "\${inputs.note}" }
  - name: boom
    agent: tier0_fail
    description: Always fails.
    max_attempts: 2
    inputs: { message: no luck }
`;

/** The caller's trace: the request span must continue it. */
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const SENSITIVE_KEYS = [
  ATTR.PROMPT,
  ATTR.SYSTEM_PROMPT,
  ATTR.COMPLETION,
  ATTR.TOOL_ARGUMENTS,
  ATTR.TOOL_RESULT,
  ATTR.STEP_INPUT,
  ATTR.STEP_OUTPUT,
];

describe('tracing (AGENTIC_TRACING=1, OTLP)', () => {
  let svc: TestService | undefined;
  let receiver: OtlpReceiver | undefined;
  afterEach(async () => {
    await svc?.dispose();
    await receiver?.close();
    svc = undefined;
    receiver = undefined;
  });

  async function start(env: Record<string, string>): Promise<TestService> {
    svc = await startTestService({ env });
    await writeFile(join(svc.workflowsDir, 'traced.yaml'), TRACED);
    return svc;
  }

  /** Starts a traced run under the caller's trace, waits for its end, then shuts down (flush). */
  async function tracedRun(s: TestService): Promise<string> {
    const res = await call(
      s.url,
      'POST',
      '/api/run',
      { workflow: 'traced', input_data: { note: MARKER } },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    );
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    expect((await s.finished(runId)).status).to.equal('failed');
    expect((await call(s.url, 'GET', '/api/workflows/traced/dag')).status).to.equal(200);
    expect((await call(s.url, 'GET', `/no/such/${runId}`)).status).to.equal(404);
    // Graceful shutdown flushes the batch: every span is at the receiver when it resolves.
    await s.dispose();
    svc = undefined;
    return runId;
  }

  function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
    const found = spans.filter((span) => span.name === name);
    expect(
      found.map((span) => span.name),
      `one span named ${name}`,
    ).to.deep.equal([name]);
    return found[0]!;
  }

  it('exports the tree request → run → step attempts, with the model and tool calls under their steps', async () => {
    receiver = await startHttpReceiver();
    const s = await start({
      AGENTIC_TRACING: '1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    const adapter = s.runtime.options.defaultAdapter;
    const runId = await tracedRun(s);
    const spans = receiver.spans;

    const request = one(spans, 'POST /api/run');
    expect(request).to.deep.include({ traceId: TRACE_ID, parentSpanId: CALLER_SPAN, kind: 2 });
    expect(request.attributes).to.deep.equal({
      'http.request.method': 'POST',
      'http.route': '/api/run',
      'http.response.status_code': 200,
    });
    expect(request.resource).to.deep.include({
      'service.name': 'agentic-runtime',
      'service.version': packageVersion,
    });
    // Route templates name the spans, never the raw path (which holds the run id).
    expect(one(spans, 'GET /api/workflows/:name/dag').attributes['http.route']).to.equal(
      '/api/workflows/:name/dag',
    );
    expect(one(spans, 'GET').attributes['http.response.status_code']).to.equal(404);
    expect(spans.filter((span) => span.name.includes(runId))).to.deep.equal([]);

    const run = one(spans, 'run traced');
    expect(run).to.deep.include({ traceId: TRACE_ID, parentSpanId: request.spanId });
    expect(run.attributes).to.deep.equal({
      [ATTR.RUN_ID]: runId,
      [ATTR.WORKFLOW]: 'traced',
      [ATTR.ADAPTER]: adapter,
      [ATTR.STEP_COUNT]: 3,
      [ATTR.STATUS]: 'failed',
      [ATTR.ERROR]: run.attributes[ATTR.ERROR],
    });
    expect(run.status.code).to.equal(2);
    // From accept (inside the request) to workflow_end (after the request answered).
    // (Up to the SDK's clock skew between spans: each anchors on Date.now(), whole ms.)
    expect(run.startNs).to.be.within(request.startNs - 1e6, request.endNs + 1e6);

    const steps = spans.filter((span) => span.name.startsWith('step '));
    const common = { [ATTR.RUN_ID]: runId, [ATTR.WORKFLOW]: 'traced', [ATTR.ADAPTER]: adapter };
    for (const step of steps)
      expect(step).to.deep.include({ traceId: TRACE_ID, parentSpanId: run.spanId });
    const remember = one(steps, 'step remember');
    expect(remember.attributes).to.deep.equal({
      ...common,
      [ATTR.STEP]: 'remember',
      [ATTR.AGENT]: 'tier0_tool',
      [ATTR.TIER]: 0,
      [ATTR.ATTEMPT]: 1,
      [ATTR.RETRY]: 0,
      [ATTR.STATUS]: 'success',
    });
    const summarize = one(steps, 'step summarize');
    expect(summarize.attributes).to.deep.include({
      [ATTR.AGENT]: 'tier1_summarizer',
      [ATTR.STATUS]: 'success',
      [ATTR.MODEL_USED]: 'placeholder',
    });
    // One span per attempt: the retried one says so, the last one failed.
    const boom = steps
      .filter((span) => span.name === 'step boom')
      .map((span) => [
        span.attributes[ATTR.ATTEMPT],
        span.attributes[ATTR.RETRY],
        span.attributes[ATTR.STATUS],
        span.status,
      ]);
    expect(boom).to.deep.equal([
      [1, 0, 'retrying', { code: 2, message: 'no luck' }],
      [2, 1, 'failed', { code: 2, message: 'no luck' }],
    ]);

    const tool = one(spans, 'execute_tool memory_set');
    expect(tool.parentSpanId).to.equal(remember.spanId);
    expect(tool.attributes).to.deep.equal({
      [ATTR.GEN_AI_OPERATION]: 'execute_tool',
      [ATTR.GEN_AI_TOOL_NAME]: 'memory_set',
      [ATTR.RUN_ID]: runId,
      [ATTR.WORKFLOW]: 'traced',
      [ATTR.STEP]: 'remember',
      [ATTR.TOOL_OUTCOME]: 'success',
    });
    const model = one(spans, 'chat placeholder');
    expect(model).to.deep.include({ parentSpanId: summarize.spanId, kind: 3 });
    expect(model.attributes).to.include({
      [ATTR.GEN_AI_OPERATION]: 'chat',
      [ATTR.GEN_AI_PROVIDER]: 'placeholder',
      [ATTR.GEN_AI_RESPONSE_MODEL]: 'placeholder',
      [ATTR.TIER]: 1,
      [ATTR.STEP]: 'summarize',
      [ATTR.STATUS]: 'success',
    });
    expect(model.attributes[ATTR.GEN_AI_INPUT_TOKENS]).to.be.greaterThan(0);
    expect(model.attributes[ATTR.GEN_AI_OUTPUT_TOKENS]).to.be.greaterThan(0);

    // Safety control 6: no prompt, output or tool argument anywhere.
    expect(JSON.stringify(spans)).not.to.include(MARKER);
    for (const span of spans)
      expect(Object.keys(span.attributes)).not.to.include.members(SENSITIVE_KEYS);
  });

  it('puts prompts, outputs and tool arguments in spans only with AGENTIC_TRACE_SENSITIVE=1', async () => {
    receiver = await startHttpReceiver();
    const s = await start({
      AGENTIC_TRACING: '1',
      AGENTIC_TRACE_SENSITIVE: '1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`,
    });
    await tracedRun(s);
    const spans = receiver.spans;
    const tool = one(spans, 'execute_tool memory_set');
    expect(JSON.parse(tool.attributes[ATTR.TOOL_ARGUMENTS] as string)).to.deep.equal({
      key: 'note',
      value: MARKER,
    });
    expect(JSON.parse(tool.attributes[ATTR.TOOL_RESULT] as string)).to.deep.equal({ stored: true });
    const model = one(spans, 'chat placeholder');
    expect(model.attributes[ATTR.PROMPT]).to.include(MARKER);
    expect(model.attributes[ATTR.COMPLETION]).to.match(/^\[placeholder tier1 response/);
    const remember = one(spans, 'step remember');
    expect(remember.attributes[ATTR.STEP_INPUT]).to.include(MARKER);
    expect(JSON.parse(remember.attributes[ATTR.STEP_OUTPUT] as string)).to.deep.equal({
      result: { stored: true },
    });
  });

  it('exports over gRPC when OTEL_EXPORTER_OTLP_PROTOCOL=grpc', async () => {
    receiver = await startGrpcReceiver();
    const s = await start({
      AGENTIC_TRACING: '1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    const runId = await tracedRun(s);
    const run = one(receiver.spans, 'run traced');
    expect(run.attributes[ATTR.RUN_ID]).to.equal(runId);
    expect(run.resource['service.name']).to.equal('agentic-runtime');
    expect(one(receiver.spans, 'POST /api/run').traceId).to.equal(TRACE_ID);
  });

  it("samples by AGENTIC_TRACE_SAMPLE_RATIO where a trace starts, and by the caller's traceparent flag", async () => {
    receiver = await startHttpReceiver();
    const s = await start({
      AGENTIC_TRACING: '1',
      AGENTIC_TRACE_SAMPLE_RATIO: '0',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    const post = async (headers: Record<string, string>) => {
      const res = await call(
        s.url,
        'POST',
        '/api/run',
        { workflow: 'traced', input_data: { note: 'x' } },
        headers,
      );
      expect(res.status, res.text).to.equal(200);
      return s.finished((res.body as { run_id: string }).run_id);
    };
    await post({});
    await post({ traceparent: `00-${'1'.repeat(32)}-${CALLER_SPAN}-00` });
    const kept = await post({ traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    await s.dispose();
    svc = undefined;
    expect(new Set(receiver.spans.map((span) => span.traceId))).to.deep.equal(new Set([TRACE_ID]));
    expect(one(receiver.spans, 'run traced').attributes[ATTR.RUN_ID]).to.equal(kept.run_id);
    expect(receiver.spans.filter((span) => span.name === 'step boom')).to.have.length(2);
  });

  /** An unsampled caller's trace: `-00`, the flag a parent-based sampler follows. */
  const UNSAMPLED_TRACE_ID = '1'.repeat(32);

  /**
   * Under `env`, three runs: one starting its own trace, one under an unsampled caller's trace,
   * one under a sampled caller's; then shutdown (flush). Answers which of the three traces
   * reached the collector: `own` (the run's own trace), `unsampled`, `sampled`.
   */
  async function tracesKept(env: Record<string, string>): Promise<string[]> {
    receiver = await startHttpReceiver();
    const s = await start({
      AGENTIC_TRACING: '1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      ...env,
    });
    const post = async (headers: Record<string, string>) => {
      const res = await call(
        s.url,
        'POST',
        '/api/run',
        { workflow: 'traced', input_data: { note: 'x' } },
        headers,
      );
      expect(res.status, res.text).to.equal(200);
      return s.finished((res.body as { run_id: string }).run_id);
    };
    const own = await post({});
    await post({ traceparent: `00-${UNSAMPLED_TRACE_ID}-${CALLER_SPAN}-00` });
    await post({ traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    await s.dispose();
    svc = undefined;
    const ownTrace = receiver.spans.find(
      (span) => span.name === 'run traced' && span.attributes[ATTR.RUN_ID] === own.run_id,
    )?.traceId;
    const names: Record<string, string> = {
      [UNSAMPLED_TRACE_ID]: 'unsampled',
      [TRACE_ID]: 'sampled',
    };
    const kept = new Set(
      receiver.spans.map(
        (span) => names[span.traceId] ?? (span.traceId === ownTrace ? 'own' : span.traceId),
      ),
    );
    return [...kept].sort();
  }

  it('samples by OTEL_TRACES_SAMPLER when AGENTIC_TRACE_SAMPLE_RATIO is unset', async () => {
    expect(await tracesKept({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).to.deep.equal([
      'sampled',
    ]);
  });

  it('OTEL_TRACES_SAMPLER=always_off records nothing, even a sampled caller’s trace', async () => {
    expect(await tracesKept({ OTEL_TRACES_SAMPLER: 'always_off' })).to.deep.equal([]);
  });

  it('OTEL_TRACES_SAMPLER=traceidratio with OTEL_TRACES_SAMPLER_ARG=1 ignores the caller’s flag', async () => {
    expect(
      await tracesKept({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }),
    ).to.deep.equal(['own', 'sampled', 'unsampled']);
  });

  it('AGENTIC_TRACE_SAMPLE_RATIO, when set, wins over OTEL_TRACES_SAMPLER', async () => {
    expect(
      await tracesKept({ AGENTIC_TRACE_SAMPLE_RATIO: '1', OTEL_TRACES_SAMPLER: 'always_off' }),
    ).to.deep.equal(['own', 'sampled']);
  });

  it('fails no request or run when the collector is down, and shuts down within the export timeout', async () => {
    // A port nothing listens on: every export is refused.
    const closed = await startHttpReceiver();
    const url = closed.url;
    await closed.close();
    const s = await start({
      AGENTIC_TRACING: '1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
    });
    const res = await call(s.url, 'POST', '/api/run', {
      workflow: 'traced',
      input_data: { note: 'x' },
    });
    expect(res.status, res.text).to.equal(200);
    const record = await s.finished((res.body as { run_id: string }).run_id);
    expect(record.steps.map((step) => step.status)).to.deep.equal(['success', 'success', 'failed']);
    const started = Date.now();
    await s.dispose();
    svc = undefined;
    expect(Date.now() - started).to.be.below(OTLP_EXPORT_TIMEOUT_MS + 2000);
  });

  it('exports nothing when AGENTIC_TRACING is off', async () => {
    receiver = await startHttpReceiver();
    const s = await start({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    await tracedRun(s);
    expect(receiver.requests).to.equal(0);
  });
});
