import { LRUCache } from 'lru-cache';

export interface LockoutOptions {
  /** Failures within this window count together. */
  windowSeconds: number;
  /** Consecutive failures (within the window) that start a lockout. */
  threshold: number;
  /** How long a lockout lasts. */
  durationSeconds: number;
  /** Injectable clock (ms). @default Date.now */
  now?: () => number;
  /** Most clients tracked at once (LRU). @default 50_000 */
  maxClients?: number;
}

/**
 * The failed-authentication record of clients: the in-process {@link AuthLockout}, or one shared
 * by the deployment's instances (src/scale/shared-lockout.ts).
 */
export interface LockoutStore {
  /** Seconds left on the client's lockout, or 0 when it is not locked out. */
  lockedFor(client: string): number | Promise<number>;
  /** Records a failure; the lockout seconds if this failure started one, else 0. */
  recordFailure(client: string): number | Promise<number>;
  /** A success clears the client's failures. */
  recordSuccess(client: string): void | Promise<void>;
}

interface FailureState {
  failures: number;
  firstFailureAt: number;
  lockedUntil: number;
}

/**
 * Auth throttle per client (spec, Authentication 7): `threshold` consecutive failures within
 * `windowSeconds` lock the client out for `durationSeconds`. A success clears the client's
 * failures. State lives in an LRU with a TTL, so memory is bounded.
 */
export class AuthLockout implements LockoutStore {
  private readonly windowMs: number;
  private readonly threshold: number;
  private readonly durationMs: number;
  private readonly now: () => number;
  private readonly clients: LRUCache<string, FailureState>;

  constructor(options: LockoutOptions) {
    this.windowMs = options.windowSeconds * 1000;
    this.threshold = options.threshold;
    this.durationMs = options.durationSeconds * 1000;
    this.now = options.now ?? Date.now;
    this.clients = new LRUCache<string, FailureState>({
      max: options.maxClients ?? 50_000,
      ttl: Math.max(this.windowMs, this.durationMs),
      ttlResolution: 0,
      perf: { now: this.now },
    });
  }

  /** Seconds left on the client's lockout, or 0 when it is not locked out. */
  lockedFor(client: string): number {
    const state = this.clients.get(client);
    if (!state) return 0;
    const left = state.lockedUntil - this.now();
    return left > 0 ? left / 1000 : 0;
  }

  /** Records a failure; returns the lockout seconds if this failure started one, else 0. */
  recordFailure(client: string): number {
    const now = this.now();
    let state = this.clients.get(client);
    if (!state || now - state.firstFailureAt > this.windowMs || state.lockedUntil > 0) {
      state = { failures: 0, firstFailureAt: now, lockedUntil: 0 };
    }
    state.failures += 1;
    if (state.failures >= this.threshold) {
      state.lockedUntil = now + this.durationMs;
      this.clients.set(client, state, { ttl: this.durationMs });
      return this.durationMs / 1000;
    }
    this.clients.set(client, state, { ttl: this.windowMs });
    return 0;
  }

  /** A success clears the client's failures. */
  recordSuccess(client: string): void {
    this.clients.delete(client);
  }
}
