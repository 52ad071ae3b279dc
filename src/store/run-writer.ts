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
 * then on each remaining write gets its tries until the drain deadline, and one that still
 * fails is abandoned (its promise rejects with {@link RecordNotWrittenError}, logged with the
 * run id: never dropped silently). A write without `retry` (a run's first record) rejects at
 * its first failure: the run is refused instead.
 *
 * While any write is failing, {@link RunWriter.status} says so (readiness and new runs read it).
 */
import type { Logger } from '../log.js';
import type { RunRecord } from '../generated/run-record.js';
import { writeRunFile } from './run-files.js';
import type { FileWriter } from './write-thread.js';

/** Timers the queue waits on (the runtime's clock). */
export interface WriterClock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RunWriterOptions {
  runsDir: string;
  /** Writes one file atomically. */
  writeFile: FileWriter;
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

/** A record abandoned at shutdown after its last try failed. */
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
   * once); whatever still fails after the deadline is abandoned. Resolves when the queue is empty.
   */
  close(drainMs: number): Promise<void>;
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
  let drained: (() => void) | undefined;

  function pump(): void {
    while (running < concurrency && ready.length > 0) {
      const job = ready.shift()!;
      running++;
      void attempt(job);
    }
    if (closing && jobs.size === 0) drained?.();
  }

  async function attempt(job: Job): Promise<void> {
    job.attempts++;
    try {
      await writeRunFile(runsDir, job.filename, job.record, writeFile, madeDirs);
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
      settle(job);
      if (job.retry) {
        logger.error(
          { runId: job.runId, file: job.filename, code, attempts: job.attempts },
          'run record lost: not written before shutdown',
        );
      }
      job.reject(new RecordNotWrittenError(code));
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
        ready.push(job);
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
      const done = new Promise<void>((resolve) => (drained = resolve));
      const deadline = clock.setTimeout(() => {
        deadlinePassed = true;
        // Writes waiting for a retry get their last try now rather than at their timer.
        for (const job of [...waiting]) {
          if (job.timer === undefined) continue;
          clock.clearTimeout(job.timer);
          job.timer = undefined;
          ready.push(job);
        }
        pump();
      }, drainMs);
      pump();
      return done.then(() => clock.clearTimeout(deadline));
    },
  };
}
