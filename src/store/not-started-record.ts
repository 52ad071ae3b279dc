/**
 * The record of an accepted run that could not start where it was sent: a queued run whose
 * worker found its workflow gone or invalid, or could not write its first run file. It is
 * `failed` with the reason and no step ran, so the run still ends with one run file and one
 * `workflow_end` (ARCHITECTURE §6) instead of vanishing after its `POST /api/run` was answered.
 */
import { basename } from 'node:path';
import type { AdapterName } from '../config/adapter-names.js';
import type { RunRecord } from '../generated/run-record.js';

/** The error of a run that could not start: this prefix, then why. */
export const NOT_STARTED = 'could not start';

/**
 * The workflow name a run file is named by, from a queued run's workflow reference (a name, or a
 * YAML path of the workflows directory): the file stem, outside `[A-Za-z0-9_.-]` replaced.
 */
export function workflowNameOf(reference: string): string {
  const stem = basename(reference).replace(/\.ya?ml$/i, '');
  return stem.replace(/[^A-Za-z0-9_.-]/g, '_') || 'workflow';
}

/** What a record without steps is about. */
export interface SteplessRun {
  runId: string;
  workflowName: string;
  adapter: AdapterName;
  inputs: Record<string, unknown>;
}

/** A run's record, failed at `now` (epoch ms) before any step: see the module comment. */
export function notStartedRecord(run: SteplessRun, reason: string, now: number): RunRecord {
  return failedWithoutSteps(run, `${NOT_STARTED}: ${reason}`, now, 0);
}

/**
 * A `failed` record with no step, ending at `now` (epoch ms) with `error`: a run that never
 * started, or (queued-runtime.ts) one whose file cannot be had. `durationMs` null: unknown.
 */
export function failedWithoutSteps(
  run: SteplessRun,
  error: string,
  now: number,
  durationMs: number | null,
): RunRecord {
  const time = new Date(now).toISOString();
  return {
    run_id: run.runId,
    workflow_name: run.workflowName,
    adapter: run.adapter,
    status: 'failed',
    inputs: run.inputs,
    steps: [],
    final_output: null,
    success_rate: 0,
    total_duration_ms: durationMs,
    step_count: 0,
    failed_step_count: 0,
    start_time: time,
    end_time: time,
    error,
    extra: {},
  };
}
