/** Feeds the LLM metrics from the router's call reports (`createLlmRouter({ onCall })`). */
import type { LlmCallReport } from '../llm/index.js';
import type { ServiceMetrics } from './service-metrics.js';

/** The router's `onCall` for `metrics`: calls, latency, tokens and cost by provider and model. */
export function createLlmCallObserver(metrics: ServiceMetrics): (report: LlmCallReport) => void {
  return (report) => {
    const labels = {
      provider: metrics.providerLabel(report.provider),
      model: metrics.modelLabel(report.model),
      outcome: report.outcome,
    };
    metrics.llmCalls.inc(labels);
    metrics.llmDuration.observe(labels, report.durationMs / 1000);
    const usage = report.usage;
    if (usage === undefined) return;
    const { provider, model } = labels;
    if (report.outcome === 'success') {
      metrics.llmTokens.inc({ provider, model, direction: 'input' }, usage.input);
      metrics.llmTokens.inc({ provider, model, direction: 'output' }, usage.output);
    }
    // Money is spent by a failed call too (a stream cut after its usage chunk).
    if (typeof usage.costUsd === 'number') metrics.llmCost.inc({ provider, model }, usage.costUsd);
    else if (usage.total > 0) metrics.llmUnpricedCalls.inc({ provider, model });
  };
}
