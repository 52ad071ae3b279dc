/**
 * What a runtime given a `tracerProvider` traces: its runs and step attempts (through the
 * per-run observer seam), and the model and tool calls its agents make (the LLM client and the
 * toolkit, wrapped). Made once per runtime; a runtime without a provider makes none of it.
 */
import type { TracerProvider } from '@opentelemetry/api';
import { packageVersion } from '../config/index.js';
import type { LlmClient } from '../llm/index.js';
import type { ToolKit } from '../tools/index.js';
// The modules, not the tracing barrel: that one loads the OpenTelemetry SDK (issue 25).
import { traceModelCalls } from '../tracing/model-spans.js';
import { TRACE_SERVICE_NAME } from '../tracing/otlp-endpoint.js';
import { createRunSpans, type RunSpans } from '../tracing/run-spans.js';
import { traceToolCalls } from '../tracing/tool-spans.js';

export interface RuntimeTracing {
  readonly runs: RunSpans;
  readonly models: (client: LlmClient) => LlmClient;
  readonly tools: (kit: ToolKit) => ToolKit;
}

export function createRuntimeTracing(provider: TracerProvider, sensitive: boolean): RuntimeTracing {
  const tracer = provider.getTracer(TRACE_SERVICE_NAME, packageVersion);
  const runs = createRunSpans(tracer, sensitive);
  const calls = { tracer, sensitive, parentOf: runs.attemptContext };
  return {
    runs,
    models: (client) =>
      traceModelCalls(client, {
        tracer,
        sensitive,
        parentOf: ({ caller }) =>
          caller === undefined ? undefined : runs.attemptContext(caller.runId, caller.step),
      }),
    tools: (kit) => traceToolCalls(kit, calls),
  };
}
