/**
 * A circuit breaker per model (spec, "what the service does" 9): `threshold` consecutive
 * failures open it; while open the router skips the model; after `cooldownMs` one half-open
 * trial call is let through; its success closes the circuit, its failure opens it again.
 */
export const BREAKER_STATES = { CLOSED: 'closed', OPEN: 'open', HALF_OPEN: 'half_open' } as const;
export type BreakerState = (typeof BREAKER_STATES)[keyof typeof BREAKER_STATES];

/** A circuit opening or closing, as other instances adopt it (src/scale/shared-breakers.ts). */
export type BreakerTransition = { state: 'open'; openedAt: number } | { state: 'closed' };

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. @default 3 */
  threshold: number;
  /** Milliseconds an open circuit waits before its half-open trial. @default 60000 */
  cooldownMs: number;
  /** Epoch milliseconds (tests pass a simulated clock). */
  now: () => number;
  /** Told when the circuit opens, or closes after being open (not on {@link adopt}). */
  onTransition?: (transition: BreakerTransition) => void;
}

export class CircuitBreaker {
  private failures = 0;
  private openedAt = 0;
  private state: BreakerState = 'closed';
  private trialInFlight = false;

  constructor(private readonly options: BreakerOptions) {}

  /** The state now (an open circuit past its cool-down reads half-open). */
  current(): BreakerState {
    if (this.state === 'open' && this.options.now() - this.openedAt >= this.options.cooldownMs) {
      return 'half_open';
    }
    return this.state;
  }

  /**
   * Whether a call may go out now. In half-open state exactly one caller gets true (the trial)
   * until it reports back.
   */
  tryAcquire(): boolean {
    const state = this.current();
    if (state === 'closed') return true;
    if (state === 'open' || this.trialInFlight) return false;
    this.state = 'half_open';
    this.trialInFlight = true;
    return true;
  }

  succeeded(): void {
    const wasClosed = this.state === 'closed';
    this.state = 'closed';
    this.failures = 0;
    this.trialInFlight = false;
    if (!wasClosed) this.options.onTransition?.({ state: 'closed' });
  }

  /**
   * Takes over another instance's transition: its circuit opened (at its time, so the cool-down
   * ends everywhere at once; an older opening than ours is ignored) or closed again.
   */
  adopt(transition: BreakerTransition): void {
    if (transition.state === 'closed') {
      this.state = 'closed';
      this.failures = 0;
      return;
    }
    if (this.state === 'open' && this.openedAt >= transition.openedAt) return;
    this.state = 'open';
    this.openedAt = transition.openedAt;
    this.failures = this.options.threshold;
  }

  failed(): void {
    this.trialInFlight = false;
    if (this.state === 'half_open') return this.open();
    this.failures++;
    if (this.failures >= this.options.threshold) this.open();
  }

  /** A call that ended without a verdict (cancelled, or the request's own fault). */
  released(): void {
    this.trialInFlight = false;
  }

  /** Milliseconds until a half-open trial is allowed (0 when not open). */
  retryInMs(): number {
    if (this.state !== 'open') return 0;
    return Math.max(0, this.openedAt + this.options.cooldownMs - this.options.now());
  }

  private open(): void {
    this.state = 'open';
    this.openedAt = this.options.now();
    this.options.onTransition?.({ state: 'open', openedAt: this.openedAt });
  }
}
