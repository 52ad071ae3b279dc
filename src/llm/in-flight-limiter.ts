/**
 * At most `max` requests in flight to one provider; further calls wait in order. Waiting is
 * abortable: a cancelled step leaves the queue at once.
 */
export class InFlightLimiter {
  private active = 0;
  private readonly waiting: { resolve: () => void; signal: AbortSignal; onAbort: () => void }[] =
    [];

  constructor(private readonly max: number) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves when a slot is free (call `release` once done); rejects with the abort reason. */
  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        resolve,
        signal,
        onAbort: () => {
          const index = this.waiting.indexOf(entry);
          if (index !== -1) this.waiting.splice(index, 1);
          reject(signal.reason as Error);
        },
      };
      signal.addEventListener('abort', entry.onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.active--;
      return;
    }
    // The slot passes straight to the next caller: `active` stays the same.
    next.signal.removeEventListener('abort', next.onAbort);
    next.resolve();
  }
}
