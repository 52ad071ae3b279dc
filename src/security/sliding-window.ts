import { LRUCache } from 'lru-cache';

/** Outcome of one {@link SlidingWindowLimiter.hit}. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current window after this one. */
  remaining: number;
  /** Milliseconds until one more request would be allowed (0 when allowed). */
  retryAfterMs: number;
  /** Milliseconds until the window is entirely free again. */
  resetMs: number;
}

/**
 * A per-client request budget: the in-process {@link SlidingWindowLimiter}, or one shared by the
 * deployment's instances (src/scale/shared-rate-window.ts, whose decisions need Redis).
 */
export interface RateWindow {
  readonly limit: number;
  readonly windowMs: number;
  /** Records one request from `key` if it is allowed, and says whether it was. */
  hit(key: string): RateDecision | Promise<RateDecision>;
}

export interface SlidingWindowOptions {
  limit: number;
  windowMs: number;
  /** Injectable clock (ms). @default Date.now */
  now?: () => number;
  /** Upper bound on memory for all tracked clients, in bytes. @default 32 MiB */
  maxBytes?: number;
}

/**
 * Exact logs are kept for limits up to this many requests per window; above it a client's
 * window is split into {@link BUCKETS} counters, which bounds memory per client at the
 * price of a 1/BUCKETS window granularity.
 */
const EXACT_LOG_MAX = 4096;
const BUCKETS = 120;

interface ClientWindow {
  /** Exact mode: timestamps ring buffer. Bucket mode: per-bucket counts. */
  slots: Float64Array;
  /** Exact mode: index of the oldest timestamp. Bucket mode: unused. */
  head: number;
  /** Exact mode: number of timestamps held. Bucket mode: start of the newest bucket. */
  size: number;
}

/**
 * A sliding-window rate limiter keyed by client. For ordinary limits it is exact: a request
 * is allowed iff fewer than `limit` requests were allowed in the last `windowMs`
 * milliseconds (a ring buffer of timestamps per client). Clients live in an LRU bounded by
 * bytes, so memory stays bounded however many addresses appear.
 */
export class SlidingWindowLimiter implements RateWindow {
  readonly limit: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly exact: boolean;
  private readonly bucketMs: number;
  private readonly clients: LRUCache<string, ClientWindow>;

  constructor(options: SlidingWindowOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.now = options.now ?? Date.now;
    this.exact = options.limit <= EXACT_LOG_MAX;
    this.bucketMs = options.windowMs / BUCKETS;
    const slotBytes = 8 * (this.exact ? options.limit : BUCKETS) + 96;
    this.clients = new LRUCache<string, ClientWindow>({
      maxSize: Math.max(slotBytes, options.maxBytes ?? 32 * 1024 * 1024),
      sizeCalculation: () => slotBytes,
      ttl: options.windowMs,
      updateAgeOnGet: false,
      ttlAutopurge: false,
      ttlResolution: 0,
      perf: { now: this.now },
    });
  }

  /** Records one request from `key` if it is allowed, and says whether it was. */
  hit(key: string): RateDecision {
    return this.exact ? this.hitExact(key) : this.hitBucketed(key);
  }

  /** Number of clients currently tracked (for tests and metrics). */
  get trackedClients(): number {
    return this.clients.size;
  }

  private hitExact(key: string): RateDecision {
    const now = this.now();
    let entry = this.clients.get(key);
    if (!entry) {
      entry = { slots: new Float64Array(this.limit), head: 0, size: 0 };
    }
    const cutoff = now - this.windowMs;
    while (entry.size > 0 && (entry.slots[entry.head] ?? 0) <= cutoff) {
      entry.head = (entry.head + 1) % this.limit;
      entry.size -= 1;
    }
    if (entry.size >= this.limit) {
      const oldest = entry.slots[entry.head] ?? now;
      const newest = entry.slots[(entry.head + entry.size - 1) % this.limit] ?? now;
      this.clients.set(key, entry, { noUpdateTTL: true });
      return {
        allowed: false,
        limit: this.limit,
        remaining: 0,
        retryAfterMs: Math.max(1, oldest + this.windowMs - now),
        resetMs: Math.max(0, newest + this.windowMs - now),
      };
    }
    entry.slots[(entry.head + entry.size) % this.limit] = now;
    entry.size += 1;
    this.clients.set(key, entry);
    const oldest = entry.slots[entry.head] ?? now;
    return {
      allowed: true,
      limit: this.limit,
      remaining: this.limit - entry.size,
      retryAfterMs: 0,
      resetMs: Math.max(0, oldest + this.windowMs - now),
    };
  }

  private hitBucketed(key: string): RateDecision {
    const now = this.now();
    const current = Math.floor(now / this.bucketMs);
    let entry = this.clients.get(key);
    if (!entry) entry = { slots: new Float64Array(BUCKETS), head: 0, size: current };
    // Clear the buckets that fell out of the window since the last request.
    const elapsed = Math.min(BUCKETS, current - entry.size);
    for (let i = 1; i <= elapsed; i += 1) entry.slots[(entry.size + i) % BUCKETS] = 0;
    entry.size = current;
    let total = 0;
    for (const count of entry.slots) total += count;
    if (total >= this.limit) {
      // The earliest non-empty bucket frees up first.
      let wait = this.windowMs;
      for (let age = BUCKETS - 1; age >= 0; age -= 1) {
        if ((entry.slots[(current - age + BUCKETS * 2) % BUCKETS] ?? 0) > 0) {
          wait = Math.ceil(((current - age + BUCKETS) * this.windowMs) / BUCKETS - now);
          break;
        }
      }
      this.clients.set(key, entry, { noUpdateTTL: true });
      return {
        allowed: false,
        limit: this.limit,
        remaining: 0,
        retryAfterMs: Math.max(1, wait),
        resetMs: this.windowMs,
      };
    }
    const slot = current % BUCKETS;
    entry.slots[slot] = (entry.slots[slot] ?? 0) + 1;
    this.clients.set(key, entry);
    return {
      allowed: true,
      limit: this.limit,
      remaining: this.limit - total - 1,
      retryAfterMs: 0,
      resetMs: this.windowMs,
    };
  }
}
