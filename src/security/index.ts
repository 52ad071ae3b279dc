export * from './sanitizer/index.js';
export { constantTimeEqual } from './constant-time.js';
export {
  SlidingWindowLimiter,
  type RateDecision,
  type SlidingWindowOptions,
} from './sliding-window.js';
export { AuthLockout, type LockoutOptions } from './lockout.js';
export { QUERY_KEY_PARAMS, queryCarriesKey } from './query-key-params.js';
export {
  PathEscapeError,
  isSafeRunId,
  resolveContained,
  resolveContainedSync,
  resolveFileToolPath,
  safeFileName,
} from './path-safety.js';
