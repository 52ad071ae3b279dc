/** Feeds the evaluation metrics from the evaluator's published events. */
import type { EvaluationCompleteEvent, WorkflowEvent } from '../generated/events.js';
import type { ServiceMetrics } from './service-metrics.js';

/** Counts an `evaluation_complete` event (other events are ignored) by rubric, grade, outcome. */
export function countEvaluation(metrics: ServiceMetrics, event: Pick<WorkflowEvent, 'type'>): void {
  if (event.type !== 'evaluation_complete') return;
  const done = event as EvaluationCompleteEvent;
  const outcome =
    done.error !== undefined && done.error !== null
      ? 'error'
      : done.passed === true
        ? 'passed'
        : done.passed === false
          ? 'failed'
          : 'error';
  metrics.evaluations.inc({
    rubric: metrics.rubricLabel(done.rubric_id ?? done.rubric),
    grade: metrics.gradeLabel(done.grade ?? undefined),
    outcome,
  });
}
