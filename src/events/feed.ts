import type { WorkflowEvent } from '../generated/events.js';
import type { EventHub, RunHistoryLookup } from './hub.js';

/** Why a feed ended. */
export type FeedEnd = 'finished' | 'hub_closed';

/** A transport's side of a feed (one WebSocket or SSE client). */
export interface FeedSink {
  /** The run is known: called once, before the first event (e.g. to send headers). */
  open(): void;
  /** One event, replay first then live, `seq` strictly increasing. */
  event(event: WorkflowEvent): void;
  /** No more events: the run's stream ended, or the hub closed. Called at most once. */
  end(reason: FeedEnd): void;
}

export interface FeedOptions {
  /** Aborting (client gone) stops delivery. */
  signal?: AbortSignal;
  /** Replaces the hub's run-file lookup. */
  history?: RunHistoryLookup;
  /**
   * Asked when the run is unknown: true to wait for it to start (then every event from `seq` 0
   * is delivered live, as for any run). @default never wait: resolve false
   */
  waitForStart?: () => boolean;
}

/**
 * Connects a sink to a run: replay (from the buffer, or rebuilt from the run file) then live
 * events. Live events that arrive while the replay is being looked up are held and delivered
 * after it, so the sink sees no gap and no duplicate. Resolves false (sink untouched) when the
 * run is unknown and `waitForStart` did not say to wait for it.
 */
export async function attachFeed(
  hub: EventHub,
  runId: string,
  sink: FeedSink,
  options: FeedOptions = {},
): Promise<boolean> {
  const { signal } = options;
  let ready = false;
  let ended = false;
  const held: { event: WorkflowEvent; last: boolean }[] = [];
  let heldClose = false;
  // Only the unsubscribe function outlives this call, and only until the feed ends: a sink that
  // stays connected after its run finished (a WebSocket) must pin neither the replay nor, through
  // the subscription, the run's buffer once the hub drops it.
  let unsubscribe: (() => void) | undefined;

  const release = (): void => {
    ended = true;
    held.length = 0;
    unsubscribe?.();
    unsubscribe = undefined;
    signal?.removeEventListener('abort', release);
  };
  const end = (reason: FeedEnd): void => {
    if (ended) return;
    release();
    sink.end(reason);
  };
  const onEvent = (event: WorkflowEvent, last: boolean): void => {
    if (ended || signal?.aborted === true) return;
    if (!ready) {
      held.push({ event, last });
      return;
    }
    sink.event(event);
    if (last) end('finished');
  };
  const onHubClose = (): void => {
    if (ready) end('hub_closed');
    else heldClose = true;
  };

  const subscription = await hub.open(runId, onEvent, {
    onHubClose,
    ...(options.history === undefined ? {} : { history: options.history }),
    ...(options.waitForStart === undefined ? {} : { waitForStart: options.waitForStart }),
  });
  if (subscription === undefined) return false;
  unsubscribe = subscription.unsubscribe;
  if (signal?.aborted === true) {
    release();
    return true;
  }
  signal?.addEventListener('abort', release, { once: true });

  ready = true;
  sink.open();
  for (const event of subscription.replay) {
    if (ended) return true;
    sink.event(event);
  }
  if (subscription.finished) {
    end('finished');
    return true;
  }
  for (const { event, last } of held.splice(0)) {
    if (ended) return true;
    sink.event(event);
    if (last) end('finished');
  }
  if (heldClose) end('hub_closed');
  return true;
}
