import { randomFillSync } from 'node:crypto';
import { ValidationError } from '../errors.js';

/** A run id: 1 to 128 characters of `A-Z a-z 0-9 _ -`. */
export const RUN_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

/** Longest run id (spec: 1 to 128 characters of `A-Z a-z 0-9 _ -`). */
export const MAX_RUN_ID_LENGTH = 128;

/**
 * Length of the part after the last `-`: the start time in base 36 (9 characters until the
 * year 5188) and 64 random bits as two 7-character base-36 halves (36^7 > 2^32).
 */
const SUFFIX_LENGTH = 9 + 7 + 7;

/** Longest workflow part, so the whole id stays within {@link MAX_RUN_ID_LENGTH}. */
export const MAX_RUN_ID_PREFIX = MAX_RUN_ID_LENGTH - 1 - SUFFIX_LENGTH;

/** Makes run ids for one runtime: `(workflowName, now) => id`. */
export type RunIdGenerator = (workflowName: string, now: number) => string;

/**
 * A generator of run ids shaped like the Python service's, `<workflow>-<suffix>`, e.g.
 * `conditional_branching-0mwtu83xc1x2y3z40a9b8c7`: clients of that service (its web UI) guess
 * a run's workflow from the text before the last `-` until `workflow_start` arrives.
 * - The suffix is lowercase letters and digits only (never `-` or `_`, so the last `-` is the
 *   separator): the start time in base 36 (ids of one workflow sort by start time) and 64
 *   random bits.
 * - The workflow part is the name with every character outside `[A-Za-z0-9_-]` (in practice
 *   `.`) replaced by `_`, cut to {@link MAX_RUN_ID_PREFIX} (104) characters, so the id always
 *   matches `[A-Za-z0-9_-]{1,128}`. For such names the guess is wrong until `workflow_start`.
 *
 * Random bytes are drawn 128 ids at a time (one `getrandom` call and one buffer per 128 runs
 * instead of one each); each id uses its own 8 bytes once. The pool belongs to the generator,
 * so to its runtime.
 */
export function createRunIdGenerator(): RunIdGenerator {
  const poolBytes = 8 * 128;
  const pool = Buffer.alloc(poolBytes);
  let offset = poolBytes;
  let lastName: string | undefined;
  let lastPrefix = '';
  return (workflowName, now) => {
    if (offset === poolBytes) {
      randomFillSync(pool);
      offset = 0;
    }
    const high = pool.readUInt32BE(offset).toString(36).padStart(7, '0');
    const low = pool
      .readUInt32BE(offset + 4)
      .toString(36)
      .padStart(7, '0');
    offset += 8;
    const time = Math.max(0, Math.trunc(now)).toString(36).padStart(9, '0');
    // The last name's prefix is kept: runs come in series of one workflow, and the prefix's
    // regular-expression replace was a tenth of making an id.
    if (workflowName !== lastName) {
      lastName = workflowName;
      lastPrefix = runIdPrefix(workflowName);
    }
    return `${lastPrefix}-${time}${high}${low}`;
  };
}

/** The workflow part of a generated run id (see {@link createRunIdGenerator}). */
export function runIdPrefix(workflowName: string): string {
  const safe = workflowName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_RUN_ID_PREFIX);
  return safe === '' ? 'run' : safe;
}

/** Throws a 422 {@link ValidationError} unless `runId` is 1–128 characters of `[A-Za-z0-9_-]`. */
export function assertRunId(runId: unknown, loc: (string | number)[] = ['run_id']): string {
  if (typeof runId === 'string' && RUN_ID_RE.test(runId)) return runId;
  const msg = 'run_id must be 1 to 128 characters of a-z, A-Z, 0-9, _ and -';
  throw new ValidationError(msg, [{ loc, msg, type: 'value_error.run_id' }]);
}
