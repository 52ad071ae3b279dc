/**
 * The run queue: BullMQ queue `queue` under the deployment's prefix (`<prefix>:queue:*` keys).
 * An api instance adds one job per accepted run, its id the run's id; workers take them
 * (run-worker.ts). A run is executed at most once: a run whose worker died is finalised as
 * interrupted (run-finaliser.ts); only a job that failed before its run started is tried again.
 */
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunRequest } from '../engine/types.js';
import type { TraceCarrier } from '../tracing/index.js';
import { RUN_QUEUE } from './keys.js';

export { RUN_QUEUE };

/** The message BullMQ gives the failure of a job found stalled (its worker stopped renewing). */
export const STALLED_REASON = 'job stalled more than allowable limit';

/** A queued run: the request as the api instance accepted it (its run id given). */
export interface RunJob {
  runId: string;
  /** The request; `workflow` is a name or a YAML path of the shared workflows directory. */
  request: Omit<RunRequest, 'traceContext'> & { runId: string; workflow: string };
  /**
   * The W3C trace context of the request that queued the run (tracing on at the api
   * instance): the worker's run span continues it. Absent without tracing.
   */
  trace?: TraceCarrier;
  /**
   * An interrupted run to resume (POST /api/runs/{run_id}/resume on an api instance): the
   * worker resumes it from its run file (`request` names only its run id and workflow).
   */
  resume?: true;
  /**
   * A fork of a finished run (POST /api/runs/{run_id}/rerun on an api instance, docs/rerun.md):
   * the worker reads the source run's file from the shared runs directory and starts the run
   * seeded with its upstream outcomes (`runtime.rerun`). `request` holds the fork's workflow,
   * merged inputs and adapter (what a run that cannot start is recorded with); `inputs` only
   * the new values the rerun was given.
   */
  rerun?: { source: string; fromStep: string; inputs?: Record<string, unknown> };
}

/**
 * Jobs are removed when they complete (the run file is the record); failed ones are kept a
 * while for inspection. A run is never started twice: a job whose worker died mid-run is found
 * stalled and failed (maxStalledCount 0, which BullMQ never retries) and its run finalised as
 * interrupted. Attempts only count failures of the worker's processor, which fails only before
 * the run starts (Redis lost while a worker takes the job): such a job is tried again, with
 * BullMQ recording the failure once Redis answers, so an accepted run is not lost to an outage.
 */
export const RUN_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600, count: 1000 },
};

/** The queue, on a BullMQ-ready connection (`openRedis({ blocking: true })`). */
export function createRunQueue(connection: Redis, prefix: string): Queue<RunJob> {
  return new Queue<RunJob>(RUN_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: RUN_JOB_OPTIONS,
  });
}
