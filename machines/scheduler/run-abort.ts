/**
 * The run's abort signal, made when first read. Most runs are never aborted and most agents
 * (tier 0) never read the signal, while an AbortController and its signal cost about 0.85 KB
 * (the signal's listener maps and its own hidden class). Aborting before the signal exists
 * remembers the reason; a signal made later is aborted with it at once, so a reader sees the
 * same thing either way.
 */
export class RunAbort {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  /** Whether the run was aborted (without making the signal). */
  get aborted(): boolean {
    return this.reason !== undefined;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
