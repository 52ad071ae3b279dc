/**
 * Ends the run of a worker that died mid-run. BullMQ finds the job stalled (its worker stopped
 * renewing the job's lock for `AGENTIC_WORKER_LOCK_SECONDS`) and, as jobs are allowed no
 * stall, fails it instead of running it again; the surviving worker that sees the failure calls
 * {@link finaliseInterruptedRun}. The run file (still `running`) gets its journal folded in and
 * is marked `failed` with `error: "interrupted"`, exactly as start-up recovery does for a dead
 * process (store/startup-recovery.ts), and its end goes out once: a `workflow_end` event and
 * the record, to the same listeners a runtime's events and records go to.
 *
 * Its file may be behind its worker's process log (run files are written without an fsync; see
 * store/process-log.ts): when the log holds an end record of the run, the run ended, and that
 * record is written to its file and announced instead.
 *
 * Only a gone owner's run is touched (store/owner.ts): a worker that lost its lock but lives
 * (a stalled event loop, Redis lost for a while) ends its run itself and releases the claim,
 * so the finaliser waits and checks again meanwhile. The claim's atomic release makes the end
 * once-only even when start-up recovery of a restarted worker marked the file first.
 */
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { replayFromRecord } from '../events/replay-from-record.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import { INTERRUPTED, interruptedRecord } from '../store/interrupted-record.js';
import { ownerFileName } from '../store/owner.js';
import { journalFileName } from '../store/run-journal.js';
import { withRunFileLock } from '../store/run-file-lock.js';
import { readRunFile, writeRunFile } from '../store/run-files.js';
import { ownerFileAlive } from '../store/stale-temp-files.js';
import { recoverJournal, withWarning } from '../store/journal-recovery.js';
import { latestLoggedRecord } from '../store/log-replay.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import { boundRunRecord } from '../store/record-bounds.js';
import { DEFAULT_CONTENT_LIMITS } from '../workflow/limits.js';
import type { FileWriter } from '../store/write-thread.js';
import type { RunClaims } from './run-claims.js';

export interface FinaliseOptions {
  runId: string;
  claims: Pick<RunClaims, 'get' | 'release'>;
  runsDir: string;
  logger: Logger;
  /** The run's end event, when this call ended the run. */
  publish: (event: WorkflowEvent) => void;
  /**
   * The `seq` of the run's last event sent before its worker died (its shared stream's last
   * entry), so the end event follows it. @default unknown: the seq of the rebuilt sequence
   */
  lastSeq?: (runId: string) => Promise<number | undefined>;
  /** The run's interrupted record, when this call ended the run. */
  recorded: (record: RunRecord, filename: string) => void;
  /** Pause between checks while the owner still looks alive, in ms. */
  recheckMs: number;
  /** Stops waiting (the worker shuts down; another worker's start-up scan takes over). */
  signal: AbortSignal;
  /**
   * Puts a run that never began back on the queue, its claim kept (see the `requeued` outcome).
   * @default none: such a run's claim is released
   */
  requeue?: () => Promise<void>;
  /**
   * With `AGENTIC_RESUME=auto`: resumes the run here once its owner is gone (run-takeover.ts),
   * given its record with the journal folded in. `resumed`: this worker took it over and runs it;
   * `taken`: another worker did (the finaliser waits for its end); `not-resumable`: it is marked
   * interrupted as without this option. @default none: the run is marked interrupted
   */
  takeOver?: (
    filename: string,
    record: RunRecord,
  ) => Promise<'resumed' | 'taken' | 'not-resumable'>;
  /** @default the write thread */
  writeFile?: FileWriter;
  /**
   * The run-record bound: the journal is read no further (one over it is set aside, see
   * store/journal-recovery.ts) and the repaired record is kept within it.
   * @default 16777216 (AGENTIC_MAX_RUN_RECORD_BYTES)
   */
  maxRecordBytes?: number;
}

/** What became of the run. */
export type FinaliseOutcome =
  'interrupted' | 'ended' | 'released' | 'requeued' | 'no-file' | 'aborted' | 'resumed';

/** Finalises one run whose job stalled (see the module comment). Never rejects. */
export async function finaliseInterruptedRun(options: FinaliseOptions): Promise<FinaliseOutcome> {
  const { runId, claims, runsDir, logger } = options;
  try {
    while (!options.signal.aborted) {
      const claim = await claims.get(runId);
      // Released: the run ended (its worker lived after all, or another finaliser ended it).
      if (claim === undefined) return 'released';
      const filename = claim.filename;
      if (filename === undefined) {
        // No start record: the run never began. Its worker died before starting it, or took the
        // job just as Redis went away and never heard of it. An accepted run is not dropped: it
        // goes back to the queue (it has not run, so running it now is its only run), unless
        // a run file of it exists after all (its start record written, the claim not told).
        if (options.requeue !== undefined && !(await hasRunFile(runsDir, runId))) {
          await options.requeue();
          logger.warn({ runId }, 'run of a dead worker had not started; queued again');
          return 'requeued';
        }
        await claims.release(runId, undefined);
        logger.warn({ runId }, 'run of a dead worker had not started; its claim is released');
        return 'no-file';
      }
      // Read and repaired under the file's lock: this process's orphan watch may be repairing
      // the same run (see run-file-lock.ts); then this finaliser only announces its end.
      const outcome = await withRunFileLock(join(runsDir, filename), () =>
        finaliseFile(options, filename),
      );
      if (outcome !== undefined) return outcome;
      await pause(options.recheckMs, options.signal);
    }
    return 'aborted';
  } catch (error) {
    logger.error(
      { runId, err: errorMessage(error) },
      'could not finalise the run of a dead worker; the next worker start-up marks it interrupted',
    );
    return 'aborted';
  }
}

/**
 * One look at a stalled run's file (under its lock): `interrupted` or `ended` once settled,
 * undefined while its owner may still be alive.
 */
async function finaliseFile(
  options: FinaliseOptions,
  filename: string,
): Promise<FinaliseOutcome | undefined> {
  const { runId, claims, runsDir, logger } = options;
  const record = await readRunFile(join(runsDir, filename));
  if (record.status !== 'running' && record.status !== 'pending') {
    // Ended: by its worker (which releases the claim itself, and is given the time to), or
    // marked interrupted by a restarted worker's start-up scan, which sends no end event.
    if (record.error !== INTERRUPTED) {
      await claims.release(runId, filename);
      return 'ended';
    }
    if (await claims.release(runId, filename)) await announce(options, record, filename);
    return 'interrupted';
  }
  // Its owner may still be alive: looked at again after a pause.
  if (!(await ownerGone(runsDir, record.owner))) return undefined;
  const maxBytes = options.maxRecordBytes ?? DEFAULT_CONTENT_LIMITS.maxRunRecordBytes;
  const logged = await endedInLog(runsDir, record.owner, filename, maxBytes);
  if (logged !== undefined) {
    await (options.writeFile ?? writeFileAtomic)(join(runsDir, filename), logged.text);
    await unlink(join(runsDir, journalFileName(filename))).catch(() => undefined);
    if (await claims.release(runId, filename)) await announce(options, logged.record, filename);
    logger.warn({ runId, filename }, 'run of a dead worker had ended in its process log');
    return 'ended';
  }
  const journal = await recoverJournal(record, {
    runsDir,
    runFile: filename,
    maxBytes,
    logger,
  });
  if (options.takeOver !== undefined) {
    const taken = await options.takeOver(filename, withWarning(journal.record, journal.warning));
    if (taken === 'resumed') return 'resumed';
    // Another worker resumes it: its end (and the claim's release) is waited for.
    if (taken === 'taken') return undefined;
  }
  const repaired = withWarning(
    boundRunRecord(interruptedRecord(journal.record, Date.now()), maxBytes).record,
    journal.warning,
  );
  await writeRunFile(runsDir, filename, repaired, options.writeFile);
  await unlink(join(runsDir, journalFileName(filename))).catch(() => undefined);
  if (await claims.release(runId, filename)) await announce(options, repaired, filename);
  logger.warn({ runId, filename }, 'run of a dead worker marked interrupted');
  return 'interrupted';
}

async function announce(options: FinaliseOptions, record: RunRecord, filename: string) {
  options.recorded(record, filename);
  const end = replayFromRecord(record, filename).at(-1);
  if (end?.type !== 'workflow_end') return;
  // Subscribers drop events at or below the last seq they saw: the end must come after it (a
  // live run has more events than its rebuilt sequence: retries, deltas, approvals).
  const last = await options.lastSeq?.(record.run_id).catch(() => undefined);
  options.publish(last === undefined ? end : { ...end, seq: Math.max(end.seq, last + 1) });
}

/** The end record of the run in its dead owner's process log, if it got that far. */
async function endedInLog(
  runsDir: string,
  owner: string | undefined,
  filename: string,
  maxBytes: number,
): Promise<{ text: string; record: RunRecord } | undefined> {
  if (owner === undefined) return undefined;
  const text = await latestLoggedRecord(runsDir, owner, filename, maxBytes);
  if (text === undefined) return undefined;
  const record = JSON.parse(text) as RunRecord;
  return record.status === 'running' || record.status === 'pending' ? undefined : { text, record };
}

/** Whether the runs directory holds a run file of `runId` (`<time>_<workflow>_<run_id>.json`). */
async function hasRunFile(runsDir: string, runId: string): Promise<boolean> {
  const suffix = `_${runId}.json`;
  return (await readdir(runsDir)).some((name) => name.endsWith(suffix));
}

/** Whether the run's owner is gone for good (a record without owner has none alive). */
async function ownerGone(runsDir: string, owner: string | undefined): Promise<boolean> {
  if (owner === undefined) return true;
  return !(await ownerFileAlive(runsDir, ownerFileName(owner)));
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
