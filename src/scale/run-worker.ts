/**
 * A worker of the run queue: takes queued runs (BullMQ, `AGENTIC_WORKER_CONCURRENCY` at once)
 * and executes each on this process's runtime, which writes the run file to the shared runs
 * directory. Around each run: the run's claim is marked running, a cancel request made before
 * the run was registered here is honoured, and the claim is released once the end record is
 * written (run-claims.ts). Cancel requests from any api instance arrive on the cancel channel.
 *
 * Jobs may not stall (BullMQ `maxStalledCount: 0`): the job of a worker that stopped renewing
 * its lock (killed) is failed, never run again, and the worker that sees the failure finalises
 * the run as interrupted (run-finaliser.ts). A graceful close stops taking jobs, lets running
 * runs finish within the grace period, then cancels them (they end and are recorded); a job
 * taken while closing goes back to the queue unstarted.
 */
import { DelayedError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { errorMessage } from '../errors.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import type { RunHandle, Runtime } from '../engine/types.js';
import { ERROR_CODES, AppError, RunNotResumableError } from '../errors.js';
import { replayFromRecord } from '../events/replay-from-record.js';
import { notStartedRecord, workflowNameOf } from '../store/not-started-record.js';
import { runFileName, writeRunFile } from '../store/run-files.js';
import { extractTraceContext } from '../tracing/index.js';
import { parseCancelRequest, type RunClaims } from './run-claims.js';
import { persistently } from './persistently.js';
import { abandonWorker, closeWithin, unsubscribeQuietly } from './quiet-close.js';
import { finaliseInterruptedRun } from './run-finaliser.js';
import { WORKER_LOST } from './run-takeover.js';
import type { ResumePolicy } from '../config/resume-policy.js';
import { internalsOf } from '../engine/runtime-internals.js';
import { TAKEN_OVER } from '../engine/run-session.js';
import { RUN_QUEUE, STALLED_REASON, type RunJob } from './run-queue.js';

export interface RunWorkerOptions {
  runtime: Runtime;
  claims: RunClaims;
  /** BullMQ's blocking connection (`openRedis({ blocking: true })`). */
  connection: Redis;
  /** A connection for the cancel channel (it enters subscriber mode). */
  subscriber: Redis;
  prefix: string;
  concurrency: number;
  /** How long a job's lock lasts without renewal (AGENTIC_WORKER_LOCK_SECONDS), in ms. */
  lockMs: number;
  logger: Logger;
  /** The seq of a run's last published event (its shared stream), for a finalised run's end. */
  lastSeq?: (runId: string) => Promise<number | undefined>;
  /**
   * AGENTIC_RESUME: with `auto` the run of a dead worker is taken over and resumed here
   * (run-takeover.ts) instead of being marked interrupted. @default 'off'
   */
  resume?: ResumePolicy;
}

/** What a finished job returns (the queue keeps nothing else of the run). */
export interface RunJobResult {
  filename: string | undefined;
  status: RunRecord['status'];
}

export interface RunWorker {
  /**
   * The runtime's events and records plus the ends of dead workers' runs this worker
   * finalised: what is published for the api instances.
   */
  subscribe(listener: (event: WorkflowEvent) => void): () => void;
  onRecord(listener: (record: RunRecord, filename: string) => void): () => void;
  /** Whether a run executes here. */
  isActive(runId: string): boolean;
  /** The runs executing here (not those queued or executing on other workers). */
  activeRuns(): string[];
  /**
   * Stops taking runs; runs finish within `graceMs`, then are cancelled. Shuts the runtime down
   * (`exiting`: see `ShutdownOptions`).
   */
  close(graceMs: number, exiting?: boolean): Promise<void>;
}

export function createRunWorker(options: RunWorkerOptions): RunWorker {
  const { runtime, claims, logger } = options;
  const label = `${hostname()}:${process.pid}`;
  const files = new Map<string, string>();
  const eventListeners = new Set<(event: WorkflowEvent) => void>();
  const recordListeners = new Set<(record: RunRecord, filename: string) => void>();
  const stop = new AbortController();
  const finalising = new Set<Promise<unknown>>();

  const internals = internalsOf(runtime);
  /** The runs executing here for a job of this worker (the others were taken over here). */
  const jobs = new Set<string>();

  // The run file's name goes to the claim with the start record (a finaliser needs it), with
  // the owner id it names (the claim's runner, see run-takeover.ts). A run taken over here has
  // no job: its claim is released here when its end record is written.
  const offRecord = runtime.onRecord((record, filename) => {
    const runId = record.run_id;
    if (record.status === 'running') {
      if (files.has(runId)) return;
      files.set(runId, filename);
      claims
        .setFile(runId, filename, record.owner)
        .catch((error: unknown) =>
          logger.warn({ runId, err: errorMessage(error) }, 'run file not recorded'),
        );
      return;
    }
    if (jobs.has(runId) || !files.has(runId)) return;
    files.delete(runId);
    void releaseTakenOver(runId, filename);
  });

  async function releaseTakenOver(runId: string, filename: string): Promise<void> {
    const self = await internals?.ownerId();
    await persistently(
      () => claims.releaseHeld(runId, filename, self),
      stop.signal,
      (error) => logger.warn({ runId, err: errorMessage(error) }, 'run claim not released yet'),
    );
  }

  /**
   * The finaliser's takeover (AGENTIC_RESUME=auto): claims the dead worker's run for this
   * runtime and resumes it from its record, reason `worker_lost`.
   */
  async function takeOver(
    runId: string,
    filename: string,
    record: RunRecord,
  ): Promise<'resumed' | 'taken' | 'not-resumable'> {
    const self = await internals?.ownerId();
    if (internals === undefined || self === undefined) return 'not-resumable';
    if (!(await claims.takeOver(runId, record.owner, self))) return 'taken';
    try {
      await internals.resumeRecord(filename, record, WORKER_LOST);
      logger.warn({ runId, fromProcess: record.owner }, 'run of a dead worker taken over');
      return 'resumed';
    } catch (error) {
      await claims.giveBack(runId, record.owner, self);
      if (error instanceof RunNotResumableError) {
        logger.warn({ runId, err: error.message }, 'run of a dead worker cannot be resumed');
        return 'not-resumable';
      }
      throw error;
    }
  }

  /** Starts a job's run here: a new run, a fork of a finished run, or a resume. */
  function startJob(data: RunJob): Promise<RunHandle> {
    // POST /api/runs/{run_id}/resume on an api instance: the interrupted run resumes here.
    if (data.resume === true) return runtime.resume(data.runId);
    // The run span continues the trace of the request that queued the run (ignored when this
    // runtime traces nothing).
    const traced =
      data.trace === undefined ? {} : { traceContext: extractTraceContext(data.trace) };
    if (data.rerun === undefined) return runtime.start({ ...data.request, ...traced });
    // POST /api/runs/{run_id}/rerun on an api instance: the source's run file is read from the
    // shared runs directory and the fork starts seeded with its upstream outcomes, as in one
    // process. Its workflow and inputs come from the source again (the request's are what the
    // api instance checked, kept for a run that cannot start).
    const { workflow: _workflow, input: _input, extra: _extra, ...settings } = data.request;
    const { source, fromStep, inputs } = data.rerun;
    return runtime.rerun(source, {
      ...settings,
      ...traced,
      fromStep,
      ...(inputs === undefined ? {} : { inputs }),
    });
  }

  async function execute(job: Job<RunJob>): Promise<RunJobResult> {
    const { runId } = job.data;
    if (!(await claims.markRunning(runId, label))) {
      logger.warn({ runId }, 'queued run has no claim (released meanwhile); not run');
      return { filename: undefined, status: 'failed' };
    }
    let handle;
    jobs.add(runId);
    try {
      handle = await startJob(job.data);
    } catch (error) {
      jobs.delete(runId);
      if (error instanceof AppError && error.code === ERROR_CODES.RUNTIME_CLOSED) {
        // Shutting down: back to the queue unstarted, for another worker.
        await claims.markQueued(runId);
        await job.moveToDelayed(Date.now(), job.token);
        throw new DelayedError();
      }
      // The api instance checked the request; what fails here (the workflow file deleted or
      // changed meanwhile, the runs directory unwritable) still ends the accepted run: a failed
      // run file saying why, its events, then the claim.
      if (job.data.resume === true) {
        // Not resumable after all (its workflow gone, ended meanwhile): its file stays as it is.
        logger.error({ runId, err: errorMessage(error) }, 'queued resume could not start');
        await persistently(
          () => claims.release(runId, undefined),
          stop.signal,
          (again) => logger.warn({ runId, err: errorMessage(again) }, 'run claim not released yet'),
        );
        return { filename: undefined, status: 'failed' };
      }
      logger.error({ runId, err: errorMessage(error) }, 'queued run could not start');
      const filename = await recordNotStarted(job.data, errorMessage(error));
      await persistently(
        () => claims.release(runId, filename),
        stop.signal,
        (again) => logger.warn({ runId, err: errorMessage(again) }, 'run claim not released yet'),
      );
      return { filename, status: 'failed' };
    }
    // A cancel made before the run was registered here reached nobody: honour it now.
    const claim = await claims.get(runId).catch(() => undefined);
    if (claim?.cancel !== undefined) runtime.cancel(runId, claim.cancel);
    const record = await handle.done;
    const filename = files.get(runId);
    files.delete(runId);
    jobs.delete(runId);
    // Taken over by another worker while this one was paused (the end fence): the claim is its.
    if (record.error === TAKEN_OVER) return { filename, status: record.status };
    const self = await internals?.ownerId();
    // The run ended and its file is written: the claim must go, or its id stays active on
    // every api instance. Redis lost meanwhile is waited for (the job's lock may lapse: then a
    // finaliser finds the file ended and releases the claim itself).
    await persistently(
      () => claims.releaseHeld(runId, filename, self),
      stop.signal,
      (error) => {
        logger.warn({ runId, err: errorMessage(error) }, 'run claim not released yet; retrying');
      },
    );
    return { filename, status: record.status };
  }

  /**
   * Writes the failed record of a run that could not start and sends its events and record to
   * this worker's listeners, as the runtime does for a run it ran. Returns the run file's name,
   * or undefined when even that write failed (the claim then goes without a file, logged).
   */
  async function recordNotStarted(job: RunJob, reason: string): Promise<string | undefined> {
    const now = Date.now();
    const record = notStartedRecord(
      {
        runId: job.runId,
        workflowName: workflowNameOf(job.request.workflow),
        adapter: job.request.adapter ?? runtime.options.defaultAdapter,
        inputs: job.request.input ?? {},
      },
      reason,
      now,
    );
    if (job.rerun !== undefined) {
      record.extra.forked_from = { run_id: job.rerun.source, step: job.rerun.fromStep };
    }
    const filename = runFileName(now, record.workflow_name, job.runId);
    try {
      await writeRunFile(runtime.options.runsDir, filename, record);
    } catch (error) {
      logger.error({ runId: job.runId, err: errorMessage(error) }, 'run file not written');
      return undefined;
    }
    emit(recordListeners, (listener) => listener(record, filename));
    for (const event of replayFromRecord(record, filename)) {
      emit(eventListeners, (listener) => listener(event));
    }
    return filename;
  }

  const worker = new Worker<RunJob, RunJobResult>(RUN_QUEUE, (job) => execute(job), {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockMs,
    stalledInterval: Math.max(500, Math.round(options.lockMs / 2)),
    maxStalledCount: 0,
    // BullMQ waits this long before it fetches jobs again after a connection error (15 s by
    // default): once Redis is back, queued runs start within about a second.
    runRetryDelay: 1_000,
    autorun: true,
  });
  worker.on('error', (error) => logger.warn({ err: errorMessage(error) }, 'run queue error'));
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    if (error.message !== STALLED_REASON) {
      // Failed before its run started (Redis lost while taking it): nothing ran. BullMQ tries
      // it again while attempts remain (RUN_JOB_OPTIONS); after the last, its id is free again
      // rather than claimed for ever.
      if (job.attemptsMade < (job.opts.attempts ?? 1)) {
        logger.warn({ runId: job.data.runId, err: error.message }, 'queued run not started yet');
        return;
      }
      logger.error({ runId: job.data.runId, err: error.message }, 'queued run not started');
      claims.release(job.data.runId, undefined).catch((again: unknown) => {
        logger.error({ runId: job.data.runId, err: errorMessage(again) }, 'claim not released');
      });
      return;
    }
    logger.warn({ runId: job.data.runId }, 'worker of a run stopped; finalising the run');
    const finalised = finaliseInterruptedRun({
      runId: job.data.runId,
      claims,
      runsDir: runtime.options.runsDir,
      maxRecordBytes: runtime.options.limits.maxRunRecordBytes,
      logger,
      publish: (event) => emit(eventListeners, (listener) => listener(event)),
      recorded: (record, filename) =>
        emit(recordListeners, (listener) => listener(record, filename)),
      recheckMs: options.lockMs,
      ...(options.lastSeq === undefined ? {} : { lastSeq: options.lastSeq }),
      signal: stop.signal,
      ...(options.resume === 'auto'
        ? {
            takeOver: (filename: string, record: RunRecord) =>
              takeOver(job.data.runId, filename, record),
          }
        : {}),
      // Never begun: back to the queue (BullMQ moves the failed job to waiting again).
      requeue: async () => {
        await claims.markQueued(job.data.runId);
        await job.retry('failed');
      },
    });
    finalising.add(finalised);
    void finalised.finally(() => finalising.delete(finalised));
  });

  const { subscriber } = options;
  const onMessage = (channel: string, message: string): void => {
    if (channel !== claims.cancelChannel) return;
    const request = parseCancelRequest(message);
    if (request !== undefined) runtime.cancel(request.runId, request.reason);
  };
  subscriber.on('message', onMessage);
  const subscribed = subscriber.subscribe(claims.cancelChannel).catch((error: unknown) => {
    logger.error({ err: errorMessage(error) }, 'cannot subscribe to cancel requests');
  });

  function emit<T>(listeners: Set<T>, call: (listener: T) => void): void {
    for (const listener of listeners) {
      try {
        call(listener);
      } catch (error) {
        logger.error({ err: errorMessage(error) }, 'listener threw');
      }
    }
  }

  return {
    subscribe(listener) {
      const off = runtime.subscribe(listener);
      eventListeners.add(listener);
      return () => {
        off();
        eventListeners.delete(listener);
      };
    },
    onRecord(listener) {
      const off = runtime.onRecord(listener);
      recordListeners.add(listener);
      return () => {
        off();
        recordListeners.delete(listener);
      };
    },
    isActive: (runId) => runtime.isActive(runId),
    activeRuns: () => runtime.activeRuns(),
    async close(graceMs, exiting = false) {
      // No new jobs from here (needs no Redis); the runs going on finish within the grace.
      await worker.pause(true);
      await runtime.shutdown({ graceMs, exiting });
      // BullMQ's unforced close finishes its bookkeeping of those jobs in Redis; while Redis is
      // away only a forced one ends (the claims and run files are already settled).
      const closed = worker.close(options.connection.status !== 'ready');
      if (!(await closeWithin(options.connection, closed))) await abandonWorker(worker);
      stop.abort();
      await Promise.all(finalising);
      offRecord();
      subscriber.off('message', onMessage);
      await unsubscribeQuietly(subscriber, claims.cancelChannel, subscribed);
    },
  };
}
