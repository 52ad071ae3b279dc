/**
 * Coalesces a step's streamed text into `token_delta` events: text arriving within one interval
 * goes out as one event, so a fast stream (hundreds of chunks a second) cannot flood WebSocket
 * clients or the per-run replay buffer. A step's text is flushed before its next lifecycle
 * event, so `token_delta`s always precede that step's `step_end`.
 */
export interface CoalescerClock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface TokenCoalescerOptions {
  clock: CoalescerClock;
  /** Longest a chunk waits before it is sent, in ms. @default 100 */
  intervalMs: number;
  /** Characters that trigger an early flush. @default 4096 */
  maxChars?: number;
  emit: (step: string, delta: string) => void;
}

export class TokenCoalescer {
  private readonly pending = new Map<string, string>();
  private timer: unknown;
  private readonly maxChars: number;

  constructor(private readonly options: TokenCoalescerOptions) {
    this.maxChars = options.maxChars ?? 4096;
  }

  push(step: string, text: string): void {
    if (text === '') return;
    const buffered = (this.pending.get(step) ?? '') + text;
    this.pending.set(step, buffered);
    if (buffered.length >= this.maxChars) {
      this.flush(step);
      return;
    }
    this.timer ??= this.options.clock.setTimeout(() => {
      this.timer = undefined;
      this.flushAll();
    }, this.options.intervalMs);
  }

  /** Sends the step's buffered text now. */
  flush(step: string): void {
    const text = this.pending.get(step);
    if (text === undefined) return;
    this.pending.delete(step);
    this.options.emit(step, text);
  }

  flushAll(): void {
    for (const step of [...this.pending.keys()]) this.flush(step);
  }

  /** Flushes and stops the timer (the run ended). */
  close(): void {
    this.flushAll();
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
