/** Feeds the LLM metrics from the router's call reports (`createLlmRouter({ onCall })`). */
import type { LlmCallReport } from '../llm/index.js';
import type { ServiceMetrics } from './service-metrics.js';

/** The router's `onCall` for `metrics`: calls, latency and tokens by provider and model. */
export function createLlmCallObserver(metrics: ServiceMetrics): (report: LlmCallReport) => void {
  return (report) => {
    const labels = {
      provider: metrics.providerLabel(report.provider),
      model: metrics.modelLabel(report.model),
      outcome: report.outcome,
    };
    metrics.llmCalls.inc(labels);
    metrics.llmDuration.observe(labels, report.durationMs / 1000);
    if (report.usage !== undefined) {
      const { provider, model } = labels;
      metrics.llmTokens.inc({ provider, model, direction: 'input' }, report.usage.input);
      metrics.llmTokens.inc({ provider, model, direction: 'output' }, report.usage.output);
    }
  };
}
