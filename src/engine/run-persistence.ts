/**
 * A runtime's persistence, in one object with one `close`: the write thread, the run-file write
 * queue, the run journals, the owner lease on the runs directory, the start-up recovery scan and
 * the orphan watch. With `persist` off every part is absent and the recovery report is empty.
 *
 * With `writeSync: 'log'` (the default) run records go through the process log of this runtime's
 * owner (`.<owner id>.<generation>.log`, store/process-log.ts): a record is durable once its
 * batch's one fdatasync returned, its run file is written without an fsync. Until the lease is
 * taken (or when it could not be) records are fsynced file by file, as with `file`.
 */
import { mkdir } from 'node:fs/promises';
import { AppError, ERROR_CODES, errorMessage } from '../errors.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { startOrphanWatch, type OrphanWatch } from '../store/orphan-watch.js';
import { acquireOwnerLease, type OwnerLease } from '../store/owner.js';
import { createRunJournal, type RunJournal } from '../store/run-journal.js';
import { createRunWriter, type RunWriter } from '../store/run-writer.js';
import {
  emptyRecoveryReport,
  recoverRunsDir,
  type RecoveryReport,
  type ResumableRun,
} from '../store/startup-recovery.js';
import { WriteThread, type FileWriter, type WriteOptions } from '../store/write-thread.js';
import { processLogPrefix } from '../store/process-log.js';
import { WRITE_SYNC_MODE } from '../config/write-sync-modes.js';
import { WorkflowPins } from '../store/workflow-pins.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { ResumeOutcome, ResumeReason } from './run-resumer.js';
import type { EngineClock } from '../../machines/engine-contract.js';
import type { ResolvedRuntimeOptions } from './types.js';

/** Seconds a refused run is told to wait (Retry-After) while run files cannot be written. */
const WRITE_RETRY_AFTER_SECONDS = 5;

export interface RunPersistenceOptions {
  resolved: ResolvedRuntimeOptions;
  clock: EngineClock;
  /** Replaces the write thread's file writes (tests, embedders); no journals then. */
  writeFile?: FileWriter | undefined;
  /** Each record the start-up scan writes (see `RuntimeOptions.onStartupRecord`). */
  onStartupRecord?: ((record: RunRecord, filename: string) => void) | undefined;
  /** Each record written by a recovery of the orphan watch (the runtime's record listeners). */
  recorded: (record: RunRecord, filename: string) => void;
  /**
   * With `resume: 'auto'`: resumes the runs of gone owners the scans leave (start-up scan:
   * `restart`; orphan watch: `owner_gone`), or marks interrupted those it cannot; resolves with
   * the run files resumed and those marked interrupted (the others are left to the next start).
   * @default none: they are marked interrupted
   */
  resumeRuns?: ((runs: ResumableRun[], reason: ResumeReason) => Promise<ResumeOutcome>) | undefined;
}

export interface RunPersistence {
  /** The run-file write queue (absent with persist off). */
  readonly writer: RunWriter | undefined;
  /** The run journals (absent with persist off or a given `writeFile`). */
  readonly journal: RunJournal | undefined;
  /** The write thread (absent with persist off). */
  readonly writeThread: WriteThread | undefined;
  /** This runtime's owner lease, once taken (undefined when it could not be, or persist is off). */
  readonly lease: Promise<OwnerLease | undefined>;
  /** The one start-up scan of the runs directory (see `Runtime.recovery`). */
  readonly recovery: Promise<RecoveryReport>;
  /** The pinned workflows of the runs directory (absent with persist off). */
  readonly pins: WorkflowPins | undefined;
  /** Writes one file atomically (run files, pins, repairs): the write thread's, or the given one. */
  readonly writeFile: FileWriter | undefined;
  /**
   * Throws 503 `runs_dir_unavailable` while run files cannot be written or the queue is full: a
   * run admitted then could only end unrecorded.
   */
  assertWritable(): void;
  /** Shutdown begins: the orphan watch stops (no recovery starts from here). */
  beginClose(): void;
  /**
   * Shutdown, first part: queued records are still written (failing ones retried) for `drainMs`,
   * then abandoned. Resolves when the queue is empty.
   */
  drain(drainMs: number): Promise<void>;
  /** Records abandoned by `drain`. */
  abandoned(): number;
  /**
   * Shutdown, last part, once every run has ended: the journals, the scans and the watch end,
   * the owner file goes (or stays with `keepOwner`: runs were left to the next start), then the
   * write thread.
   */
  close(options: { keepOwner: boolean }): Promise<void>;
}

export function createRunPersistence(options: RunPersistenceOptions): RunPersistence {
  const { resolved, clock } = options;
  const log: Logger = resolved.logger;
  // This runtime's write thread: a worker started on the first write (run files, journals,
  // recovery repairs) and ended by `close`.
  const writeThread = resolved.persist ? new WriteThread() : undefined;
  /** How this runtime's writes are made durable (the log's prefix is known once the lease is). */
  let writeOptions: WriteOptions =
    resolved.writeSync === WRITE_SYNC_MODE.OFF ? { sync: false } : {};
  const writeFile: FileWriter | undefined =
    options.writeFile ??
    (writeThread === undefined
      ? undefined
      : (path, data) => writeThread.write(path, data, writeOptions));
  // A run's start record is durable in the log when the API answers; its file is written
  // `journalCommitMs` later, or never when the run ended first (most runs: one file creation
  // and rename per run instead of two; measured in docs/benchmarks.md).
  const writeFirst: FileWriter | undefined =
    options.writeFile === undefined && writeThread !== undefined
      ? (path, data) =>
          writeThread.write(path, data, {
            ...writeOptions,
            deferMs: writeOptions.log === undefined ? undefined : resolved.journalCommitMs,
          })
      : undefined;
  const writer: RunWriter | undefined =
    resolved.persist && writeFile !== undefined
      ? createRunWriter({
          runsDir: resolved.runsDir,
          writeFile,
          ...(writeFirst === undefined ? {} : { writeFirst }),
          concurrency: resolved.writeConcurrency,
          retryBaseMs: resolved.writeRetryBaseMs,
          retryMaxMs: resolved.writeRetryMaxMs,
          clock,
          logger: log,
        })
      : undefined;
  // Its worker's deaths are reported when run files go through it.
  const offWorkerDeath =
    writeThread !== undefined && options.writeFile === undefined
      ? writeThread.onDeath((death) =>
          log.error(
            { exitCode: death.exitCode, code: death.code, consecutive: death.consecutive },
            death.restarting
              ? 'run-file write worker died; its writes are retried on a new worker'
              : 'run-file write worker keeps dying; writing from the main thread from now on',
          ),
        )
      : undefined;
  const offCheckpoint =
    writeThread !== undefined && options.writeFile === undefined
      ? writeThread.onCheckpoint((checkpoint) => {
          if (checkpoint.code === undefined) log.debug(checkpoint, 'process log checkpointed');
          else {
            log.warn(
              checkpoint,
              'process log not checkpointed (the files could not be flushed); it stays for recovery',
            );
          }
        })
      : undefined;

  const journal: RunJournal | undefined =
    writeThread !== undefined
      ? createRunJournal({
          runsDir: resolved.runsDir,
          append: (path, data) => writeThread.append(path, data),
          commitMs: resolved.journalCommitMs,
          maxLineBytes: resolved.limits.maxStepIoBytes,
          maxFileBytes: resolved.limits.maxRunRecordBytes,
          clock,
          logger: log,
        })
      : undefined;

  // The owner lease comes first: a run's start record names its owner, so that no other
  // process's recovery takes the run for one of a dead process.
  const lease: Promise<OwnerLease | undefined> = resolved.persist
    ? mkdir(resolved.runsDir, { recursive: true })
        .then(() =>
          acquireOwnerLease({
            runsDir: resolved.runsDir,
            logger: log,
            leaseMs: resolved.ownerLeaseMs,
          }),
        )
        .then((owner) => {
          // Runs start only once the lease is settled: every run record of this owner is logged.
          if (resolved.writeSync === WRITE_SYNC_MODE.LOG) {
            writeOptions = { log: processLogPrefix(resolved.runsDir, owner.id) };
          }
          return owner;
        })
        .catch((error: unknown) => {
          log.error(
            { err: errorMessage(error) },
            'cannot write the owner file in the runs directory; runs are written without an owner',
          );
          return undefined;
        })
    : Promise.resolve(undefined);
  // Pinned copies go through the write thread, not a given `writeFile` (which stands in for the
  // run files' writes: tests count and fail those).
  const pins =
    writeThread === undefined
      ? undefined
      : new WorkflowPins(
          resolved.runsDir,
          options.writeFile === undefined
            ? (path, data) => writeThread.write(path, data)
            : (path, data) => writeFileAtomic(path, data),
        );
  // Runs of gone owners are left to be resumed rather than marked interrupted.
  const { resumeRuns } = options;
  const resuming = resolved.resume === 'auto' && resumeRuns !== undefined;
  const recovery: Promise<RecoveryReport> = resolved.persist
    ? lease.then(recover)
    : Promise.resolve(emptyRecoveryReport());
  // After the start-up scan, owners that die while this runtime runs are noticed within a lease.
  let closing = false;
  let watch: OrphanWatch | undefined;
  let watchStopped: Promise<void> | undefined;
  const watching: Promise<void> = recovery.then(async () => {
    const owner = await lease;
    if (owner === undefined || closing) return;
    watch = startOrphanWatch({
      runsDir: resolved.runsDir,
      self: owner.id,
      everyMs: Math.max(1, Math.floor(resolved.ownerLeaseMs / 3)),
      recover: (gone) => recoverGone(owner, gone),
      logger: log,
    });
  });

  /** The orphan watch's recovery of the runs of owners found gone (see orphan-watch.ts). */
  async function recoverGone(owner: OwnerLease, gone: ReadonlySet<string>): Promise<void> {
    const left: ResumableRun[] = [];
    const report = await recoverRunsDir({
      runsDir: resolved.runsDir,
      self: owner.id,
      now: clock.now(),
      only: gone,
      maxRecordBytes: resolved.limits.maxRunRecordBytes,
      logger: log,
      // The history index learns of them as of any record written.
      onRecovered: options.recorded,
      ...(resuming ? { onResumable: (run: ResumableRun) => left.push(run) } : {}),
      ...(writeFile !== undefined ? { writeFile } : {}),
    });
    const { recovered, journalsFolded, ownersRemoved, tempFilesRemoved, recordsReplayed } = report;
    log.warn(
      {
        owners: [...gone],
        recovered: recovered.length,
        resumable: report.resumable.length,
        journalsFolded,
        recordsReplayed,
        ownersRemoved,
        tempFilesRemoved,
        files: recovered.slice(0, 100),
      },
      report.resumable.length > 0
        ? 'owner of runs gone; its runs are resumed here'
        : 'owner of runs gone; its runs marked interrupted',
    );
    if (left.length > 0) await resumeRuns?.(left.splice(0), 'owner_gone');
  }

  /** The one start-up scan of this runtime (see Runtime.recovery); logs its result once. */
  async function recover(owner: OwnerLease | undefined): Promise<RecoveryReport> {
    const started = clock.now();
    const left: ResumableRun[] = [];
    try {
      const report = await recoverRunsDir({
        runsDir: resolved.runsDir,
        self: owner?.id,
        now: clock.now(),
        maxRecordBytes: resolved.limits.maxRunRecordBytes,
        logger: log,
        ...(resuming ? { onResumable: (run: ResumableRun) => left.push(run) } : {}),
        ...(writeFile !== undefined ? { writeFile } : {}),
        ...(options.onStartupRecord !== undefined ? { onRecord: options.onStartupRecord } : {}),
      });
      // Resumed once the scan is over (the runs are this runtime's from here), not during it.
      if (left.length > 0) {
        const outcome = await resumeRuns!(left.splice(0), 'restart');
        report.resumed.push(...outcome.resumed);
        report.recovered.push(...outcome.interrupted);
      }
      const { recovered, resumable: toResume, resumed, ...counts } = report;
      log.info(
        {
          ...counts,
          recovered: recovered.length,
          resumable: toResume.length,
          resumed: resumed.length,
          ms: clock.now() - started,
        },
        resumed.length > 0
          ? 'runs directory scanned; runs of gone processes resumed'
          : recovered.length > 0
            ? 'runs directory scanned; runs of gone processes marked interrupted'
            : 'runs directory scanned',
      );
      if (recovered.length > 0) log.warn({ files: recovered.slice(0, 100) }, 'interrupted runs');
      return report;
    } catch (error) {
      log.error({ err: errorMessage(error) }, 'could not scan the runs directory');
      return emptyRecoveryReport();
    }
  }

  /** Shutdown begins: no recovery starts from here, and the orphan watch stops. */
  function beginClose(): void {
    closing = true;
    watchStopped ??= watching.then(() => watch?.stop());
  }

  return {
    writer,
    journal,
    writeThread,
    lease,
    recovery,
    pins,
    writeFile,
    assertWritable() {
      if (writer === undefined) return;
      const { failing, pending, lastError } = writer.status();
      if (failing === 0 && pending < resolved.writeQueueMax) return;
      const why =
        failing > 0
          ? `run files cannot be written to the runs directory (${lastError ?? 'EIO'}); ${failing} run record(s) waiting`
          : `the run-file write queue is full (${pending} records waiting)`;
      throw new AppError(ERROR_CODES.RUNS_DIR_UNAVAILABLE, `${why}; try again later`, {
        status: 503,
        expose: true,
        headers: { 'Retry-After': String(WRITE_RETRY_AFTER_SECONDS) },
      });
    },
    beginClose,
    drain: async (drainMs) => {
      await writer?.close(drainMs);
    },
    abandoned: () => writer?.abandoned() ?? 0,
    async close({ keepOwner }) {
      beginClose();
      await journal?.close();
      // The scans write too: they end before the owner file goes, which stays when runs were
      // left unwritten: once this process is gone, any process's scan recovers them.
      await recovery;
      await watchStopped;
      // Every file written is flushed and the process log removed before the owner file goes (a
      // log left behind, the flush failing or the worker dead, is replayed at the next start).
      if (options.writeFile === undefined) await writeThread?.checkpoint();
      await (await lease)?.release({ keep: keepOwner });
      offWorkerDeath?.();
      offCheckpoint?.();
      await writeThread?.stop();
    },
  };
}
