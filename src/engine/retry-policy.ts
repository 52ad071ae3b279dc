/** Options of {@link createRetryDelay}. */
export interface RetryDelayOptions {
  /** Delay cap before jitter for the first retry, in ms. @default 500 */
  baseMs?: number;
  /** Upper bound of any delay, in ms. @default 30000 */
  maxMs?: number;
  /** Uniform random in [0, 1). @default Math.random */
  random?: () => number;
}

/** Default base delay of the retry backoff, in ms. */
export const DEFAULT_RETRY_BASE_MS = 500;
/** Default cap of the retry backoff, in ms. */
export const DEFAULT_RETRY_MAX_MS = 30_000;

/**
 * Exponential backoff with full jitter: the delay before attempt `attempt + 1` (after attempt
 * `attempt` failed) is uniform in `[0, min(maxMs, baseMs · 2^(attempt-1)))`. Full jitter spreads
 * retries of many concurrent runs instead of synchronising them.
 */
export function createRetryDelay(options: RetryDelayOptions = {}): (attempt: number) => number {
  const baseMs = options.baseMs ?? DEFAULT_RETRY_BASE_MS;
  const maxMs = options.maxMs ?? DEFAULT_RETRY_MAX_MS;
  const random = options.random ?? Math.random;
  return (attempt) => {
    const exponent = Math.max(0, Math.min(attempt - 1, 30));
    const cap = Math.min(maxMs, baseMs * 2 ** exponent);
    return Math.floor(random() * cap);
  };
}
