/** OpenTelemetry traces of a runtime and its service (issue 14; docs/tracing.md). */
export { ATTR, MAX_SENSITIVE_CHARS } from './attributes.js';
export { createRunSpans, type RunSpans } from './run-spans.js';
export { traceModelCalls } from './model-spans.js';
export { traceToolCalls } from './tool-spans.js';
export {
  DEFAULT_OTLP_ENDPOINTS,
  OTLP_EXPORT_TIMEOUT_MS,
  otlpTracesUrl,
  TRACE_SERVICE_NAME,
  type OtlpProtocol,
} from './otlp-endpoint.js';
export { createOtlpTracerProvider, type OtlpTracingOptions } from './otlp-provider.js';
export { createSampler } from './sampler.js';
export { extractTraceContext, injectTraceContext, type TraceCarrier } from './propagation.js';
