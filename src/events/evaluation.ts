import type { EvaluationCompleteEvent, WorkflowEvent } from '../generated/events.js';
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

type EvaluationCompleteFields = Omit<
  EvaluationCompleteEvent,
  'type' | 'run_id' | 'seq' | 'timestamp'
>;

/**
 * The `evaluation_complete` payload of a stored evaluation (`extra.evaluation` of a scored
 * run), the same live and when rebuilt from the run file. Undefined when nothing was scored yet.
 */
export function evaluationEventFields(
  raw: Record<string, unknown>,
): EvaluationCompleteFields | undefined {
  const fields: EvaluationCompleteFields = {};
  const str = (
    key: 'rubric' | 'rubric_id' | 'rubric_version' | 'grade' | 'evaluator' | 'error',
  ) => {
    if (typeof raw[key] === 'string') fields[key] = raw[key];
  };
  const num = (key: 'weighted_score' | 'overall_score' | 'pass_threshold') => {
    if (typeof raw[key] === 'number') fields[key] = raw[key];
  };
  str('rubric');
  str('rubric_id');
  str('rubric_version');
  num('weighted_score');
  num('overall_score');
  str('grade');
  if (typeof raw.passed === 'boolean') fields.passed = raw.passed;
  num('pass_threshold');
  str('evaluator');
  if (Array.isArray(raw.criteria)) {
    fields.criteria = raw.criteria as NonNullable<EvaluationCompleteFields['criteria']>;
  }
  if (typeof raw.hard_gates === 'object' && raw.hard_gates !== null) {
    fields.hard_gates = raw.hard_gates as Record<string, boolean>;
  }
  if (Array.isArray(raw.floor_violations)) {
    fields.floor_violations = raw.floor_violations as Record<string, unknown>[];
  }
  if (Array.isArray(raw.hard_gate_failures))
    fields.hard_gate_failures = raw.hard_gate_failures as string[];
  if (typeof raw.score_layers === 'object' && raw.score_layers !== null) {
    fields.score_layers = raw.score_layers as Record<string, unknown>;
  }
  str('error');
  const scored =
    fields.overall_score !== undefined || fields.passed !== undefined || fields.error !== undefined;
  return scored ? fields : undefined;
}
