/**
 * The run-file write queue of one runtime. Every run-file write goes through it, so at most
 * `concurrency` are with the file system at once however many runs end together (at shutdown,
 * tens of thousands: one open file each would exhaust the descriptors).
 *
 * A write made with `retry` (a run's end record) never fails for a transient reason: when the
 * file cannot be written (disk full, read-only or vanished directory, descriptors exhausted,
 * dead write worker) it stays queued in memory and is tried again with exponential backoff
 * (`retryBaseMs` doubling up to `retryMaxMs`) until it is on disk. Its promise resolves then,
 * which is when the run may report its end. Only {@link RunWriter.close} ends the retries: from
 * then on each remaining write gets its tries until the drain deadline; at the deadline every
 * write not with the file system is abandoned (its promise rejects with
 * {@link RecordNotWrittenError}): one that was failing is logged with its run id, the others
 * (they never had their turn) are counted in what `close` resolves with, never dropped
 * silently. A write without `retry` (a run's first record) rejects at its first failure: the
 * run is refused instead.
 *
 * While any write is failing, {@link RunWriter.status} says so (readiness and new runs read it).
 */
import type { Logger } from '../log.js';
import type { RunRecord } from '../generated/run-record.js';
import { writeRunFile } from './run-files.js';
import type { FileWriter } from './write-thread.js';

/** Timers the queue waits on (the runtime's clock). */
export interface WriterClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RunWriterOptions {
  runsDir: string;
  /** Writes one file atomically. */
  writeFile: FileWriter;
  /**
   * Writes a run's first record (`retry: false`), when it may be made durable otherwise than by
   * its file (the process log: the file is written later, or never for a run that ended first).
   * @default writeFile
   */
  writeFirst?: FileWriter | undefined;
  /** Writes with the file system at once. */
  concurrency: number;
  /** First retry delay (ms); doubles per failure. */
  retryBaseMs: number;
  /** Longest retry delay (ms). */
  retryMaxMs: number;
  clock: WriterClock;
  logger: Logger;
}

/** What the queue holds, for readiness and run admission. */
export interface RunWriterStatus {
  /** Writes queued, waiting for a retry or with the file system. */
  pending: number;
  /** Writes whose last try failed (waiting for their retry). */
  failing: number;
  /** The errno code of the latest failure while some write is failing (`ENOSPC`, ...). */
  lastError: string | undefined;
}

/** A run whose latest record is not on disk yet. */
export interface UnwrittenRecord {
  filename: string;
  /** Tries so far (all failed). */
  attempts: number;
  /** The errno code of the last failure. */
  error: string;
}

/** The code of a record abandoned at the drain deadline before its first try. */
const NO_TURN = 'shutdown grace passed';

/** A record abandoned at shutdown (failing, or not tried before the drain deadline). */
export class RecordNotWrittenError extends Error {
  constructor(readonly code: string) {
    super(`run record not written (${code})`);
    this.name = 'RecordNotWrittenError';
  }
}

export interface RunWriter {
  /** Writes `record` as `filename`; see the module comment for `retry`. */
  write(runId: string, filename: string, record: RunRecord, retry: boolean): Promise<void>;
  status(): RunWriterStatus;
  /** The run's pending record when its last try failed; undefined once written (or never failed). */
  unwritten(runId: string): UnwrittenRecord | undefined;
  /**
   * Stops retrying after `drainMs`: queued writes are still written (at most `concurrency` at
   * once) until then; at the deadline the writes not with the file system are abandoned, and
   * any write made or failing after it. Resolves when the queue is empty.
   */
  close(drainMs: number): Promise<void>;
  /**
   * Records abandoned at the drain deadline so far, failing or not (their files keep what was
   * last written: a run's start record).
   */
  abandoned(): number;
}

interface Job {
  runId: string;
  filename: string;
  record: RunRecord;
  retry: boolean;
  attempts: number;
  error: string | undefined;
  timer: unknown;
  resolve: () => void;
  reject: (error: Error) => void;
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : 'EIO';
}

/** Creates the write queue of a runtime (see the module comment). */
export function createRunWriter(options: RunWriterOptions): RunWriter {
  const { runsDir, writeFile, concurrency, clock, logger } = options;
  const ready: Job[] = [];
  const jobs = new Set<Job>();
  const waiting = new Set<Job>();
  const byRun = new Map<string, Job>();
  /** Run directories this queue has made (see writeRunFile). */
  const madeDirs = new Set<string>();
  let running = 0;
  let lastError: string | undefined;
  let closing = false;
  let deadlinePassed = false;
  /** The drain deadline (clock time), once closing; its timer runs while writes are queued. */
  let deadlineAt: number | undefined;
  let deadlineTimer: unknown;
  let abandoned = 0;
  let drained: (() => void) | undefined;

  function pump(): void {
    while (running < concurrency && ready.length > 0) {
      const job = ready.shift()!;
      running++;
      void attempt(job);
    }
    if (closing && jobs.size === 0) {
      if (deadlineTimer !== undefined) clock.clearTimeout(deadlineTimer);
      deadlineTimer = undefined;
      drained?.();
    }
  }

  /** While closing with writes queued, the deadline's timer runs (none holds an idle queue). */
  function armDeadline(): void {
    if (deadlineAt === undefined || deadlinePassed || deadlineTimer !== undefined) return;
    if (jobs.size === 0) return;
    deadlineTimer = clock.setTimeout(passDeadline, Math.max(0, deadlineAt - clock.now()));
  }

  function passDeadline(): void {
    deadlineTimer = undefined;
    deadlinePassed = true;
    // The deadline is the process's: writing the rest at the file system's pace (~530/s
    // measured, so 40,000 records took 76 s past a 10 s grace) would outlast a supervisor's
    // patience. Writes with the file system finish; the rest are abandoned now.
    for (const job of waiting) {
      if (job.timer !== undefined) clock.clearTimeout(job.timer);
      job.timer = undefined;
    }
    const left = new Set([...ready, ...waiting]);
    ready.length = 0;
    for (const job of left) abandon(job);
    if (jobs.size === 0) drained?.();
  }

  async function attempt(job: Job): Promise<void> {
    job.attempts++;
    try {
      const write = job.retry ? writeFile : (options.writeFirst ?? writeFile);
      await writeRunFile(runsDir, job.filename, job.record, write, madeDirs);
      settle(job);
      if (job.error !== undefined) {
        logger.info(
          { runId: job.runId, attempts: job.attempts },
          'run record written after retries',
        );
      }
      job.resolve();
    } catch (error) {
      failed(job, codeOf(error));
    }
    running--;
    pump();
  }

  function settle(job: Job): void {
    jobs.delete(job);
    if (byRun.get(job.runId) === job) byRun.delete(job.runId);
    waiting.delete(job);
    if (waiting.size === 0) lastError = undefined;
  }

  function failed(job: Job, code: string): void {
    job.error = code;
    if (!job.retry || deadlinePassed) {
      if (job.retry) abandon(job);
      else {
        settle(job);
        job.reject(new RecordNotWrittenError(code));
      }
      return;
    }
    lastError = code;
    waiting.add(job);
    const delay = Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** (job.attempts - 1));
    if (job.attempts === 1) {
      logger.error({ runId: job.runId, code }, 'run record not written; retrying');
    }
    job.timer = clock.setTimeout(() => {
      job.timer = undefined;
      ready.push(job);
      pump();
    }, delay);
  }

  /** Gives up a write at the drain deadline (see the module comment). */
  function abandon(job: Job): void {
    settle(job);
    abandoned++;
    if (job.error !== undefined) {
      logger.error(
        { runId: job.runId, file: job.filename, code: job.error, attempts: job.attempts },
        'run record lost: not written before shutdown',
      );
    }
    job.reject(new RecordNotWrittenError(job.error ?? NO_TURN));
  }

  return {
    write(runId, filename, record, retry) {
      return new Promise<void>((resolve, reject) => {
        const job: Job = {
          runId,
          filename,
          record,
          retry,
          attempts: 0,
          error: undefined,
          timer: undefined,
          resolve,
          reject,
        };
        jobs.add(job);
        byRun.set(runId, job);
        // A run ending after the drain deadline (cancelled late) has no turn either.
        if (deadlineAt !== undefined && clock.now() >= deadlineAt) deadlinePassed = true;
        if (deadlinePassed && retry) {
          abandon(job);
          return;
        }
        ready.push(job);
        armDeadline();
        pump();
      });
    },
    status() {
      return { pending: jobs.size, failing: waiting.size, lastError };
    },
    unwritten(runId) {
      const job = byRun.get(runId);
      if (job?.error === undefined) return undefined;
      return { filename: job.filename, attempts: job.attempts, error: job.error };
    },
    close(drainMs) {
      closing = true;
      deadlineAt ??= clock.now() + drainMs;
      const done = new Promise<void>((resolve) => (drained = resolve));
      armDeadline();
      pump();
      return done;
    },
    abandoned: () => abandoned,
  };
}
