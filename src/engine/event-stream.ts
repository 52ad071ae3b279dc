import type { WorkflowEvent } from '../generated/events.js';

/**
 * One run's events as an AsyncIterable: every event is buffered, so an iteration that starts
 * late still begins at `workflow_start`; each iteration ends after the run's last event
 * (`close()`, called after `workflow_end`). Several iterations may run side by side.
 */
export class RunEventStream implements AsyncIterable<WorkflowEvent> {
  private readonly events: WorkflowEvent[] = [];
  private closed = false;
  private readonly waiters = new Set<() => void>();

  private static ended: RunEventStream | undefined;

  /** A stream with no events, already ended (shared: a closed stream never changes). */
  static empty(): RunEventStream {
    if (RunEventStream.ended === undefined) {
      RunEventStream.ended = new RunEventStream();
      RunEventStream.ended.close();
    }
    return RunEventStream.ended;
  }

  push(event: WorkflowEvent): void {
    if (this.closed) return;
    this.events.push(event);
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  [Symbol.asyncIterator](): AsyncIterator<WorkflowEvent> {
    let index = 0;
    const next = (): Promise<IteratorResult<WorkflowEvent>> => {
      const event = this.events[index];
      if (event !== undefined) {
        index++;
        return Promise.resolve({ value: event, done: false });
      }
      if (this.closed) return Promise.resolve({ value: undefined, done: true });
      return new Promise<void>((resolve) => this.waiters.add(resolve)).then(next);
    };
    return {
      next,
      return: () => {
        index = Number.POSITIVE_INFINITY;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private wake(): void {
    if (this.waiters.size === 0) return;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiters) resolve();
  }
}
