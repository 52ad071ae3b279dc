import type {
  EvaluationCompleteEvent,
  StepEndEvent,
  StepErrorEvent,
  StepStartEvent,
  WorkflowEvent,
} from '../generated/events.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { isFinishedStepStatus, STEP_STATUS } from '../workflow/types.js';
import { evaluationEventFields, evaluationRequested } from './evaluation.js';

/**
 * Rebuilds a run's event sequence from its run file, for a late joiner whose replay buffer was
 * evicted or who joins after a restart (spec: "Beyond the buffer, history is available only from
 * the persisted run log file"). It is the sequence the live mapper (`event-mapper.ts`) emitted,
 * field for field, except what the file does not hold: `workflow_start`, then per step
 * `step_start` (not for a step skipped without starting), `step_error` for a failed step,
 * `step_end`, in the live order the file records (each step's `start_seq` and `end_seq`; files
 * without them give the steps in file order, each step's events together); then
 * `workflow_end` when the run has finished, then
 * `evaluation_start`/`evaluation_complete` when the file carries evaluation results. `seq` counts
 * from 0. Not in the file, so not rebuilt: the `step_error` of each retried attempt, loop
 * iterations (`step_complete`), token deltas and approvals; timestamps are the file's step times
 * (the live events carry the clock at emission).
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

  // Each step's events in two parts, its start and its end (step_error and step_end), placed
  // at their live `seq`s when the file has every one of them.
  const parts: { seq: number | undefined; events: StepEventFields[] }[] = [];
  let ordered = true;
  for (const step of record.steps) {
    // The live mapper emits `step_start` when the first attempt starts: a step with no start
    // time never started (skipped, or failed before it could), unless the file is mid-attempt.
    // A step a resumed or forked run was seeded with (docs/durable-runs.md, docs/rerun.md) keeps
    // its start time and goes out live as its step_start and step_end together, as here.
    const started =
      step.start_time !== null ||
      step.status === STEP_STATUS.RUNNING ||
      step.status === STEP_STATUS.RETRYING;
    if (started) {
      parts.push({ seq: step.start_seq, events: [stepStart(step, record.start_time)] });
      ordered &&= step.start_seq !== undefined;
    }
    if (!isFinishedStepStatus(step.status)) continue;
    const endTime = record.end_time ?? record.start_time;
    const end: StepEventFields[] = [];
    if (step.status === STEP_STATUS.FAILED) end.push(stepError(step, endTime));
    end.push(stepEnd(step, endTime));
    parts.push({ seq: step.end_seq, events: end });
    ordered &&= step.end_seq !== undefined;
  }
  if (ordered) parts.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  for (const part of parts) for (const event of part.events) push(event);

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
    if (evaluation.rubric !== undefined) start.rubric = evaluation.rubric;
    if (evaluation.evaluator !== undefined) start.evaluator = evaluation.evaluator;
    // The dataset fields the live event carries, from the settings stored beside the result.
    const raw = record.extra.evaluation as Record<string, unknown>;
    if (typeof raw.dataset_source === 'string' || raw.dataset_source === null) {
      start.dataset_source = raw.dataset_source;
    }
    if (typeof raw.dataset_id === 'string' || raw.dataset_id === null)
      start.dataset_id = raw.dataset_id;
    if (typeof raw.sample_index === 'number' || raw.sample_index === null) {
      start.sample_index = raw.sample_index;
    }
    push(start);
    push({ ...evaluation, type: 'evaluation_complete', timestamp });
  }
  return events;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type StepEventFields =
  | Omit<StepStartEvent, 'seq' | 'run_id'>
  | Omit<StepErrorEvent, 'seq' | 'run_id'>
  | Omit<StepEndEvent, 'seq' | 'run_id'>;

type EvaluationFields = Omit<EvaluationCompleteEvent, 'type' | 'run_id' | 'seq' | 'timestamp'>;

function stepStart(step: StepRecord, fallbackTime: string): Omit<StepStartEvent, 'seq' | 'run_id'> {
  return {
    type: 'step_start',
    timestamp: step.start_time ?? fallbackTime,
    step: step.step_name,
    agent: step.agent,
    tier: step.tier,
    input: step.input,
    attempt: 1,
  };
}

/** The final `step_error` the live mapper emits before a failed step's `step_end`. */
function stepError(step: StepRecord, fallbackTime: string): Omit<StepErrorEvent, 'seq' | 'run_id'> {
  const event: Omit<StepErrorEvent, 'seq' | 'run_id'> = {
    type: 'step_error',
    timestamp: step.end_time ?? step.start_time ?? fallbackTime,
    step: step.step_name,
    status: STEP_STATUS.FAILED,
    duration_ms: step.duration_ms,
    agent: step.agent,
    tier: step.tier,
    error: step.error,
  };
  const attempts = attemptsOf(step);
  if (attempts > 0) event.attempt = attempts;
  return event;
}

function stepEnd(step: StepRecord, fallbackTime: string): Omit<StepEndEvent, 'seq' | 'run_id'> {
  const skipReason = step.metadata.skip_reason;
  const event: Omit<StepEndEvent, 'seq' | 'run_id'> = {
    type: 'step_end',
    timestamp: step.end_time ?? step.start_time ?? fallbackTime,
    step: step.step_name,
    status: step.status,
    duration_ms: step.duration_ms,
    agent: step.agent,
    model_used: step.model_used,
    tokens_used: step.tokens_used,
    ...(step.cost_usd === undefined ? {} : { cost_usd: step.cost_usd }),
    tier: step.tier,
    input: step.input,
    output: step.output,
    error: step.error,
    retry_count: step.retry_count,
    skip_reason: typeof skipReason === 'string' ? skipReason : null,
  };
  const attempts = attemptsOf(step);
  if (attempts > 0) event.attempt = attempts;
  if (step.messages !== undefined) event.messages = step.messages;
  return event;
}

/**
 * Attempts made, as the runtime records them (`metadata.attempts`); files written before that
 * field existed give `retry_count + 1` for a step that started, 0 for one that did not.
 */
function attemptsOf(step: StepRecord): number {
  const recorded = step.metadata.attempts;
  if (typeof recorded === 'number' && Number.isInteger(recorded) && recorded >= 0) return recorded;
  return step.start_time === null ? 0 : step.retry_count + 1;
}

/** The evaluation result recorded in `extra.evaluation`, when the run was scored. */
function evaluationResult(record: RunRecord): EvaluationFields | undefined {
  if (!evaluationRequested(record)) return undefined;
  return evaluationEventFields(record.extra.evaluation as Record<string, unknown>);
}
