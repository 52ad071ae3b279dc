import type {
  EvaluationCompleteEvent,
  StepEndEvent,
  StepStartEvent,
  WorkflowEvent,
} from '../generated/events.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { evaluationRequested } from './evaluation.js';

/**
 * Rebuilds a run's event sequence from its run file, for a late joiner whose replay buffer was
 * evicted or who joins after a restart (spec: "Beyond the buffer, history is available only from
 * the persisted run log file"). The sequence is `workflow_start`, then `step_start`/`step_end`
 * per step in the file's order (no `step_start` for a step that was skipped without starting),
 * then `workflow_end` when the run has finished, then `evaluation_start`/`evaluation_complete`
 * when the file carries evaluation results. `seq` counts from 0. Token deltas, retries and
 * approvals are not in the run file and so are not rebuilt.
 */
export function replayFromRecord(record: RunRecord, filename?: string): WorkflowEvent[] {
  const events: WorkflowEvent[] = [];
  const runId = record.run_id;
  const push = (event: DistributiveOmit<WorkflowEvent, 'seq' | 'run_id'>): void => {
    events.push({ ...event, run_id: runId, seq: events.length });
  };

  push({
    type: 'workflow_start',
    timestamp: record.start_time,
    workflow_name: record.workflow_name,
    adapter: record.adapter,
    inputs: record.inputs,
    step_count: record.step_count,
  });

  for (const step of record.steps) {
    const started = step.start_time !== null || step.status !== 'skipped';
    if (started) push(stepStart(step, record.start_time));
    if (isFinal(step.status)) push(stepEnd(step, record.end_time ?? record.start_time));
  }

  if (record.status !== 'success' && record.status !== 'failed') return events;
  push({
    type: 'workflow_end',
    timestamp: record.end_time ?? record.start_time,
    workflow_name: record.workflow_name,
    status: record.status,
    duration_ms: record.total_duration_ms ?? 0,
    error: record.error,
    final_output: record.final_output,
    success_rate: record.success_rate,
    filename: filename ?? null,
  });

  const evaluation = evaluationResult(record);
  if (evaluation !== undefined) {
    const timestamp = record.end_time ?? record.start_time;
    const start: DistributiveOmit<WorkflowEvent, 'seq' | 'run_id'> = {
      type: 'evaluation_start',
      timestamp,
    };
    if (evaluation.rubric_id !== undefined) start.rubric_id = evaluation.rubric_id;
    push(start);
    push({ ...evaluation, type: 'evaluation_complete', timestamp });
  }
  return events;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type EvaluationFields = Omit<EvaluationCompleteEvent, 'type' | 'run_id' | 'seq' | 'timestamp'>;

function isFinal(status: StepRecord['status']): boolean {
  return status === 'success' || status === 'failed' || status === 'skipped';
}

function stepStart(step: StepRecord, fallbackTime: string): Omit<StepStartEvent, 'seq' | 'run_id'> {
  return {
    type: 'step_start',
    timestamp: step.start_time ?? fallbackTime,
    step: step.step_name,
    agent: step.agent,
    tier: step.tier,
    input: step.input,
  };
}

function stepEnd(step: StepRecord, fallbackTime: string): Omit<StepEndEvent, 'seq' | 'run_id'> {
  const event: Omit<StepEndEvent, 'seq' | 'run_id'> = {
    type: 'step_end',
    timestamp: step.end_time ?? step.start_time ?? fallbackTime,
    step: step.step_name,
    status: step.status,
    duration_ms: step.duration_ms,
    agent: step.agent,
    model_used: step.model_used,
    tokens_used: step.tokens_used,
    tier: step.tier,
    input: step.input,
    output: step.output,
    error: step.error,
    retry_count: step.retry_count,
  };
  const skipReason = step.metadata.skip_reason;
  if (typeof skipReason === 'string') event.skip_reason = skipReason;
  return event;
}

/** The evaluation result recorded in `extra.evaluation`, when the run was scored. */
function evaluationResult(record: RunRecord): EvaluationFields | undefined {
  if (!evaluationRequested(record)) return undefined;
  const raw = record.extra.evaluation as Record<string, unknown>;
  const fields: EvaluationFields = {};
  if (typeof raw.rubric_id === 'string') fields.rubric_id = raw.rubric_id;
  if (typeof raw.overall_score === 'number') fields.overall_score = raw.overall_score;
  if (typeof raw.grade === 'string') fields.grade = raw.grade;
  if (typeof raw.passed === 'boolean') fields.passed = raw.passed;
  if (typeof raw.error === 'string') fields.error = raw.error;
  const scored =
    fields.overall_score !== undefined || fields.passed !== undefined || fields.error !== undefined;
  return scored ? fields : undefined;
}
