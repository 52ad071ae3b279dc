/**
 * Taking over the runs of a worker that died (docs/scale-out.md, "When a worker dies"). With
 * `AGENTIC_RESUME=auto` a run whose worker is gone (kill -9, a lost machine, a pause past its
 * owner lease) is resumed by one live worker from its run file and journal in the shared runs
 * directory, through the resume seam (run-resumer.ts `resumeRecord`), with `extra.resumes`
 * reason `worker_lost`.
 *
 * - **The claim.** Exactly one worker takes each run: the run's claim in Redis names the owner id
 *   of the process executing it (`runner`, set with the start record), and taking the run over is
 *   one Lua script that changes it from the dead owner to the taker (run-claims.ts `takeOver`).
 *   Every way a worker can find the run goes through it: the finaliser of its stalled job
 *   (run-finaliser.ts), the runtime's orphan watch and a restarted worker's start-up scan
 *   (RuntimeOptions.takeOver).
 * - **The fence.** A worker that comes back from a pause longer than its lease (SIGSTOP, a VM
 *   frozen) may still be executing a run another worker took over. Before it writes a run's end
 *   record it checks that the claim still names it (RuntimeOptions.endFence); when it does not
 *   (or the claim is gone while its run file says another owner, or an end), the run is dropped
 *   there: no end record, no `workflow_end`, and its claim left to the new owner. The check is
 *   a Redis read per run end; it is not a token the file system checks, so what the paused
 *   worker wrote before the check (step events, journal lines of steps it finished) stays.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResumeReason } from '../engine/run-resumer.js';
import type { RuntimeOptions } from '../engine/types.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';
import type { RunClaims } from './run-claims.js';

/** The reason recorded in `extra.resumes` for a run taken over from a dead worker. */
export const WORKER_LOST: ResumeReason = 'worker_lost';

export interface TakeoverOptions {
  claims: Pick<RunClaims, 'takeOver' | 'get'>;
  runsDir: string;
  logger: Logger;
}

/** The runtime options of a worker's runtime that make its resumes go through the claims. */
export function takeoverHooks(
  options: TakeoverOptions,
): Required<Pick<RuntimeOptions, 'takeOver' | 'endFence'>> {
  const { claims, runsDir, logger } = options;
  return {
    async takeOver(run, _reason, self) {
      if (self === undefined) return undefined;
      if (!(await claims.takeOver(run.runId, run.owner, self))) {
        logger.debug({ runId: run.runId }, 'run of a dead worker taken by another worker');
        return undefined;
      }
      logger.warn({ runId: run.runId, fromProcess: run.owner }, 'run of a dead worker taken over');
      return WORKER_LOST;
    },
    async endFence(runId, owner) {
      const claim = await claims.get(runId);
      if (claim !== undefined) return claim.runner === undefined || claim.runner === owner;
      // The claim is gone. Ended by a finaliser (the file says so, or names another owner) the
      // run is lost; else (a Redis restarted empty) it is still ours.
      const record = await runFileOf(runsDir, runId);
      return (
        record === undefined ||
        ((record.status === 'running' || record.status === 'pending') && record.owner === owner)
      );
    },
  };
}

async function runFileOf(runsDir: string, runId: string): Promise<RunRecord | undefined> {
  const suffix = `_${runId}.json`;
  const name = (await readdir(runsDir)).find((n) => n.endsWith(suffix) && !n.startsWith('.'));
  if (name === undefined) return undefined;
  try {
    return JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}
