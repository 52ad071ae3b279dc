import { randomFillSync } from 'node:crypto';
import { ValidationError } from '../errors.js';

const RUN_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * A new run id: the start time in base 36 (so ids sort by time) and 64 random bits in
 * base64url, e.g. `m1x2y3z4-Qk3v9fJ0aBc`. Always matches `[A-Za-z0-9_-]{1,128}`.
 */
export function generateRunId(now: number = Date.now()): string {
  if (poolOffset === POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const random = pool.toString('base64url', poolOffset, poolOffset + 8);
  poolOffset += 8;
  return `${now.toString(36).padStart(9, '0')}-${random}`;
}

/**
 * Random bytes for ids, filled 128 ids at a time (one `getrandom` call and one buffer instead
 * of one each per run). Each id uses its own 8 bytes once.
 */
const POOL_BYTES = 8 * 128;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** Throws a 422 {@link ValidationError} unless `runId` is 1–128 characters of `[A-Za-z0-9_-]`. */
export function assertRunId(runId: unknown, loc: (string | number)[] = ['run_id']): string {
  if (typeof runId === 'string' && RUN_ID_RE.test(runId)) return runId;
  const msg = 'run_id must be 1 to 128 characters of a-z, A-Z, 0-9, _ and -';
  throw new ValidationError(msg, [{ loc, msg, type: 'value_error.run_id' }]);
}
