/** Prometheus metrics of a runtime and its service (issue 14). */
export {
  createServiceMetrics,
  METRIC_PREFIX,
  MAX_NAME_LABELS,
  REFUSAL_REASONS,
  STREAM_TRANSPORTS,
  type GaugeSources,
  type MetricsOptions,
  type RefusalReason,
  type ServiceMetrics,
  type StreamTransport,
} from './service-metrics.js';
export { createBoundedLabel, OTHER_LABEL } from './bounded-label.js';
export {
  CountingHistogram,
  type CountingHistogramConfig,
  type ScrapedMetric,
} from './counting-histogram.js';
export { CountingCounter, type CountingCounterConfig } from './counting-counter.js';
export { observeRuntime } from './run-observer.js';
export { createLlmCallObserver } from './llm-observer.js';
export { createToolCallObserver } from './tool-observer.js';
export { countEvaluation } from './eval-observer.js';
