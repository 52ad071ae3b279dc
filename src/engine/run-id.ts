import { randomBytes } from 'node:crypto';
import { ValidationError } from '../errors.js';

const RUN_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * A new run id: the start time in base 36 (so ids sort by time) and 64 random bits in
 * base64url, e.g. `m1x2y3z4-Qk3v9fJ0aBc`. Always matches `[A-Za-z0-9_-]{1,128}`.
 */
export function generateRunId(now: number = Date.now()): string {
  return `${now.toString(36).padStart(9, '0')}-${randomBytes(8).toString('base64url')}`;
}

/** Throws a 422 {@link ValidationError} unless `runId` is 1–128 characters of `[A-Za-z0-9_-]`. */
export function assertRunId(runId: unknown, loc: (string | number)[] = ['run_id']): string {
  if (typeof runId === 'string' && RUN_ID_RE.test(runId)) return runId;
  const msg = 'run_id must be 1 to 128 characters of a-z, A-Z, 0-9, _ and -';
  throw new ValidationError(msg, [{ loc, msg, type: 'value_error.run_id' }]);
}
