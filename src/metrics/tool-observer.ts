/** Feeds the tool-call metric from the tool registry's reports (`tools.onToolCall`). */
import type { ToolCallReport } from '../tools/index.js';
import type { ServiceMetrics } from './service-metrics.js';

/**
 * The tool options' `onToolCall` for `metrics`: calls by tool and outcome. Tool names are the
 * registry's closed set (unknown names are reported as `_unknown`), so the label is bounded.
 */
export function createToolCallObserver(metrics: ServiceMetrics): (report: ToolCallReport) => void {
  return (report) => metrics.toolCalls.inc({ tool: report.tool, outcome: report.outcome });
}
