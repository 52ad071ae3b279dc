/**
 * What a resumed run starts from, read from its run file (start record with the journal folded
 * in, or a record marked interrupted): the engine seed (machines/engine-contract.ts
 * `EngineSeed`) and the step records of its new start record.
 *
 * - A step that finished (success, a failure of its own, a skip) keeps its record and is seeded:
 *   it does not run again. Exception: a success whose whole output was replaced by a truncation
 *   marker (the run-record bound) has lost its output; it runs again.
 * - A step that had started and not finished (`running` / `retrying`, or `failed` with error
 *   `interrupted` in a record marked interrupted) is made again (see `EngineSeed`): its
 *   attempts begun are counted (`metadata.attempts`, else one per start) and its interruptions
 *   (`metadata.interruptions` + 1); the new start record counts the attempt the resumed run is
 *   about to make and this interruption, so a step that kills its process every time fails
 *   `interrupted` after `max_attempts` interruptions instead of looping.
 * - Every other step (pending, or skipped with reason `interrupted`) starts afresh.
 *
 * Pure: no I/O.
 */
import type { EngineSeed, StepOutcome } from '../../machines/engine-contract.js';
import { join } from 'node:path';
import { errorMessage, RunNotResumableError } from '../errors.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { usageFromRecord } from '../llm/usage-record.js';
import { TRUNCATED_FLAG } from '../workflow/size-bounds.js';
import { STEP_STATUS, type CompiledWorkflow } from '../workflow/types.js';
import { INTERRUPTED } from './interrupted-record.js';
import { attemptsBegun } from './journal-recovery.js';
import { readRunFile } from './run-files.js';

/** A run file that cannot be resumed with a workflow (the steps do not match). */
export class ResumePlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResumePlanError';
  }
}

/** What {@link resumePlan} makes. */
export interface ResumePlan {
  seed: EngineSeed;
  /** The step records of the resumed run's start record, in YAML order. */
  steps: StepRecord[];
  /** Steps whose interrupted attempt runs again (or fails, `resume: fail`), by name. */
  interrupted: string[];
}

/** Whether a record's status says the run was stopped by a dead process (see the module comment). */
export function isInterruptedRecord(record: RunRecord): boolean {
  return (
    record.status === 'running' ||
    record.status === 'pending' ||
    (record.status === 'failed' && record.error === INTERRUPTED)
  );
}

/** The plan of resuming `record` with `workflow` (the one it started with). */
export function resumePlan(record: RunRecord, workflow: CompiledWorkflow): ResumePlan {
  const recorded = record.steps;
  if (recorded.length !== workflow.steps.length) {
    throw new ResumePlanError(
      `the run file has ${recorded.length} steps, workflow ${workflow.name} has ${workflow.steps.length}`,
    );
  }
  const finished = new Map<string, StepOutcome>();
  const attempts = new Map<string, number>();
  const interruptions = new Map<string, number>();
  const interrupted: string[] = [];
  const steps = workflow.steps.map((step, i): StepRecord => {
    const entry = recorded[i]!;
    if (entry.step_name !== step.name) {
      throw new ResumePlanError(
        `step ${i + 1} of the run file is ${entry.step_name}, of workflow ${workflow.name} ${step.name}`,
      );
    }
    const outcome = finishedOutcome(entry);
    if (outcome !== undefined) {
      finished.set(step.name, outcome);
      return entry;
    }
    const begun = unfinishedAttempts(entry);
    if (begun === 0) return pendingRecord(entry, {});
    const times = interruptionsOf(entry) + 1;
    attempts.set(step.name, begun);
    interruptions.set(step.name, times);
    interrupted.push(step.name);
    return pendingRecord(entry, { attempts: begun + 1, interruptions: times });
  });
  return { seed: { steps: finished, attempts, interruptions }, steps, interrupted };
}

/** The outcome of a step record that counts as finished, else undefined. */
function finishedOutcome(step: StepRecord): StepOutcome | undefined {
  switch (step.status) {
    case STEP_STATUS.SUCCESS:
      if (isMarker(step.output)) return undefined;
      break;
    case STEP_STATUS.FAILED:
      if (step.error === INTERRUPTED) return undefined;
      break;
    case STEP_STATUS.SKIPPED:
      if (step.metadata.skip_reason === INTERRUPTED) return undefined;
      break;
    case STEP_STATUS.PENDING:
    case STEP_STATUS.RUNNING:
    case STEP_STATUS.RETRYING:
      return undefined;
    default: {
      const unknownStatus: never = step.status;
      return unknownStatus;
    }
  }
  const attempts =
    typeof step.metadata.attempts === 'number'
      ? step.metadata.attempts
      : step.status === STEP_STATUS.SKIPPED
        ? 0
        : step.retry_count + 1;
  const startTime = step.start_time === null ? null : Date.parse(step.start_time);
  const endTime = step.end_time === null ? Number.NaN : Date.parse(step.end_time);
  return {
    status: step.status,
    input: step.input,
    output: (step.output ?? null) as Record<string, unknown> | null,
    error: step.error,
    skipReason: step.metadata.skip_reason ?? null,
    modelUsed: step.model_used,
    tokensUsed: usageFromRecord(step.tokens_used, step.cost_usd),
    attempts,
    iterations: typeof step.metadata.iterations === 'number' ? step.metadata.iterations : 0,
    startTime: startTime !== null && Number.isFinite(startTime) ? startTime : null,
    endTime: Number.isFinite(endTime) ? endTime : (startTime ?? 0),
    ...(step.verification === undefined ? {} : { verification: step.verification }),
    ...(step.messages === undefined ? {} : { messages: step.messages }),
    ...(step.metadata.items === undefined ? {} : { items: step.metadata.items }),
  };
}

/** Attempts begun by a step that did not finish (0: it never started). */
function unfinishedAttempts(step: StepRecord): number {
  if (step.status === STEP_STATUS.SUCCESS) return Math.max(1, attemptsBegun(step));
  return attemptsBegun(step);
}

/** Interruptions of a step counted by earlier resumes. */
function interruptionsOf(step: StepRecord): number {
  const counted = step.metadata.interruptions;
  return typeof counted === 'number' && counted > 0 ? counted : 0;
}

/**
 * A step's record in the resumed run's start record: pending, with what a later resume needs
 * (the attempts begun, counting the one about to be made, and the interruptions).
 */
function pendingRecord(step: StepRecord, metadata: StepRecord['metadata']): StepRecord {
  return {
    step_name: step.step_name,
    status: STEP_STATUS.PENDING,
    agent: step.agent,
    tier: step.tier,
    model_used: null,
    tokens_used: null,
    duration_ms: 0,
    retry_count: 0,
    input: null,
    output: null,
    error: null,
    start_time: null,
    end_time: null,
    metadata,
  };
}

function isMarker(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>)[TRUNCATED_FLAG] === true
  );
}

/**
 * The record of run `runId` (its file `filename` in `runsDir`) when it was interrupted and so can
 * resume: 422 when the file cannot be read, 409 when the run ended otherwise.
 */
export async function readInterruptedRecord(
  runsDir: string,
  runId: string,
  filename: string,
): Promise<RunRecord> {
  let record: RunRecord;
  try {
    record = await readRunFile(join(runsDir, filename));
  } catch (error) {
    throw new RunNotResumableError(
      `the run file of ${runId} cannot be read (${errorMessage(error)})`,
      422,
    );
  }
  if (!isInterruptedRecord(record)) {
    const why = record.error === null ? record.status : `${record.status}: ${record.error}`;
    throw new RunNotResumableError(
      `run ${runId} ended ${why}; only an interrupted run resumes`,
      409,
    );
  }
  return record;
}
