export * from './sanitizer/index.js';
export { constantTimeEqual } from './constant-time.js';
export {
  SlidingWindowLimiter,
  type RateDecision,
  type RateWindow,
  type SlidingWindowOptions,
} from './sliding-window.js';
export { AuthLockout, type LockoutOptions, type LockoutStore } from './lockout.js';
export { QUERY_KEY_PARAMS, queryCarriesKey } from './query-key-params.js';
export {
  WS_KEY_PROTOCOL_PREFIX,
  WS_PROTOCOL,
  offeredProtocols,
  selectProtocol,
} from './ws-protocol-key.js';
export {
  PathEscapeError,
  isSafeRunId,
  resolveContained,
  resolveContainedSync,
  resolveFileToolPath,
  resolveFileToolPathSync,
  safeFileName,
} from './path-safety.js';
