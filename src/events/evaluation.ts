import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';

/**
 * Whether a run asked for in-service evaluation (`extra.evaluation.enabled` in its run file).
 * Such a run's event stream ends with `evaluation_complete` instead of `workflow_end`
 * (spec: "The stream ends when a `workflow_end` or `evaluation_complete` event is sent").
 */
export function evaluationRequested(record: Pick<RunRecord, 'extra'>): boolean {
  const evaluation = record.extra.evaluation;
  return (
    typeof evaluation === 'object' &&
    evaluation !== null &&
    (evaluation as Record<string, unknown>).enabled === true
  );
}

/**
 * Whether `event` is the last event of its run's stream, given whether evaluation is expected
 * (or has started: an `evaluation_start` already seen counts as expected).
 */
export function endsStream(event: WorkflowEvent, expectEvaluation: boolean): boolean {
  if (event.type === 'evaluation_complete') return true;
  return event.type === 'workflow_end' && !expectEvaluation;
}
