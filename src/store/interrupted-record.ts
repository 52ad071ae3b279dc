/**
 * The record of a run whose process died while it ran: `failed` with `error: "interrupted"`.
 * Steps that had started (the journal says so) become failed, steps never started skipped;
 * finished steps keep their outcome, and the success rate counts them.
 */
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { STEP_STATUS } from '../workflow/types.js';

/** The error recorded on runs found `running` at start-up whose owner is gone. */
export const INTERRUPTED = 'interrupted';

/** Marks a running record interrupted at `now` (epoch ms); see the module comment. */
export function interruptedRecord(record: RunRecord, now: number): RunRecord {
  const endTime = new Date(now).toISOString();
  const steps = (Array.isArray(record.steps) ? record.steps : []).map((step): StepRecord => {
    if (step.status === STEP_STATUS.RUNNING || step.status === STEP_STATUS.RETRYING) {
      return { ...step, status: STEP_STATUS.FAILED, error: INTERRUPTED, end_time: endTime };
    }
    if (step.status === STEP_STATUS.PENDING) {
      return {
        ...step,
        status: STEP_STATUS.SKIPPED,
        metadata: { ...step.metadata, skip_reason: INTERRUPTED },
      };
    }
    return step;
  });
  const started = Date.parse(record.start_time);
  const { owner: _owner, ...rest } = record;
  return {
    ...rest,
    status: 'failed',
    error: INTERRUPTED,
    steps,
    success_rate: successRateOf(steps),
    failed_step_count: steps.filter((s) => s.status === STEP_STATUS.FAILED).length,
    end_time: endTime,
    total_duration_ms: Number.isFinite(started) ? Math.max(0, now - started) : null,
  };
}

/** As run-record.ts's `successRate`, over step records: skips by a false `when:` are left out. */
function successRateOf(steps: readonly StepRecord[]): number {
  let considered = 0;
  let succeeded = 0;
  for (const step of steps) {
    if (step.status === STEP_STATUS.SKIPPED && step.metadata.skip_reason === 'condition false') {
      continue;
    }
    considered++;
    if (step.status === STEP_STATUS.SUCCESS) succeeded++;
  }
  return considered === 0 ? 100 : Math.round((succeeded / considered) * 10000) / 100;
}
