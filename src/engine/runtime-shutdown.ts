/**
 * The order of a runtime's shutdown, for its runs and their files: wait for the runs up to the
 * grace, drain the queued records, then either leave the runs still active to the next start
 * (resume on: it resumes them, docs/durable-runs.md) or cancel them up to a deadline, and close
 * the persistence (journals, scans, owner file, write thread).
 */
import type { EngineClock } from '../../machines/engine-contract.js';
import type { Logger } from '../log.js';
import type { RunPersistence } from './run-persistence.js';
import type { RunRegistry } from './run-registry.js';
import type { RunSession } from './run-session.js';

/** Reason given to runs still active when `shutdown` gives up waiting (resume off). */
export const SHUTDOWN_REASON = 'runtime shutting down';

/**
 * The least time the end records of the runs cancelled at the grace get to be written (ms): a
 * grace spent waiting for runs would otherwise leave every cancelled run unwritten. At the
 * measured ~530 writes/s, about 500 records; the rest are left to the next start.
 */
const SHUTDOWN_DRAIN_FLOOR_MS = 1000;

export interface RunsToStop {
  runs: RunRegistry;
  persistence: RunPersistence;
  clock: EngineClock;
  log: Logger;
  /**
   * Runs still active when the grace ends are left to the next start rather than cancelled
   * (resume on, with the runtime's own journals).
   */
  leavesRunsToNextStart: boolean;
}

/** Stops the runtime's runs and closes its persistence (see the module comment). */
export async function stopRuns(
  parts: RunsToStop,
  graceMs: number,
  exiting: boolean,
): Promise<void> {
  const { runs, persistence, clock, log, leavesRunsToNextStart } = parts;
  const started = clock.now();
  persistence.beginClose();
  // Runs waiting for their end record count as active: the grace covers their writes too.
  const idle = await runs.waitIdle(graceMs);
  // Queued records are still written (bounded concurrency) and failing ones retried until
  // the grace has passed (at least the drain floor, counted from before the cancellations,
  // which take their time too); then the rest are abandoned: their runs end failed, their
  // files keep the start record naming this owner.
  const drainMs = Math.max(SHUTDOWN_DRAIN_FLOOR_MS, graceMs - (clock.now() - started));
  const drained = persistence.drain(drainMs);
  // Runs still active at the grace: with resume on, left to the next start (which resumes
  // them), their finished steps' journal lines written now. Else cancelled until the drain
  // ends (a record written after it would be abandoned anyway); the ones not reached by then
  // are left as they are, their files keeping the start record like the abandoned ones.
  let left: RunSession[] = [];
  if (idle) {
    // nothing is left
  } else if (leavesRunsToNextStart) {
    left = runs.unfinished();
    // From here their steps reach neither events nor journal: what finished is flushed, and
    // what was running runs again at the resume, as the interrupted step of a crash does. So
    // they are stopped too (attempts aborted, no further step started): a run left going on
    // until the exit would do work (side effects, model calls) its resume does again. Exiting,
    // a slice at a time until the drain ends (~0.2 ms a run); those not reached by then (tens of
    // thousands of runs) go on until the exit, at most the drain floor.
    const notStopped = exiting
      ? await runs.eachUntil(left, clock.now() + drainMs, (session) => session.abandon(true))
      : [];
    for (const session of exiting ? notStopped : left) session.abandon(!exiting);
    await persistence.journal?.flush(left);
  } else {
    left = await runs.cancelUntil(clock.now() + drainMs, SHUTDOWN_REASON);
    for (const session of left) session.abandon(!exiting);
  }
  for (const session of left) runs.release(session);
  await runs.allDone();
  await drained;
  const unwritten = persistence.abandoned() + left.length;
  if (leavesRunsToNextStart && left.length > 0) {
    log.warn(
      { left: left.length, unwritten: persistence.abandoned(), graceMs },
      'shutdown grace passed: runs left to the next start, which resumes them',
    );
  } else if (unwritten > 0) {
    log.warn(
      { unwritten, notCancelled: left.length, graceMs, drainMs },
      'shutdown grace passed: runs left unwritten; their files keep the start record and the next start marks them interrupted',
    );
  }
  await persistence.close({ keepOwner: unwritten > 0 });
}
