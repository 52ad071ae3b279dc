/**
 * The event hub's contracts: what it is asked (subscriptions, replay sources) and what it
 * answers. The hub itself is in hub.ts.
 */
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import type { Logger } from '../log.js';

/** Where a late joiner's replay comes from when the hub holds no buffer for the run. */
export interface RunHistoryLookup {
  getByRunId(runId: string): Promise<{ record: RunRecord; filename: string } | undefined>;
  /** Settles once every run id is known (the start-up scan); a lookup waits for it. */
  whenLoaded?(): Promise<void>;
}

/**
 * Receives each live event after the replay. `last` is true for the event that ends the run's
 * stream (`workflow_end`, or `evaluation_complete` when evaluation was requested).
 */
export type HubListener = (event: WorkflowEvent, last: boolean) => void;

export interface HubSubscription {
  /** Buffered events at subscription time, oldest first (at most 500). */
  replay: WorkflowEvent[];
  /** True when no live event will follow the replay. */
  finished: boolean;
  /**
   * Where the replay came from: the in-memory buffer, the run file, or nowhere yet (`pending`:
   * a run not started yet, whose events will all be delivered live from `seq` 0 if it starts).
   */
  source: 'buffer' | 'record' | 'pending';
  /** Stops live delivery. Idempotent. */
  unsubscribe: () => void;
}

/**
 * Replay then live for runs this process does not execute: the shared replay store (Redis
 * streams, src/scale/remote-events.ts), when `REDIS_URL` is set.
 */
export interface RemoteRunEvents {
  /**
   * A subscription to the run's shared stream, or undefined when the store holds nothing for it
   * (or cannot be reached). With `waitForStart`, an empty stream is followed too: a `pending`
   * subscription whose events all arrive live from `seq` 0.
   */
  open(
    runId: string,
    listener: HubListener,
    options?: { onClose?: () => void; waitForStart?: boolean },
  ): Promise<HubSubscription | undefined>;
}

/**
 * What the hub follows: every run's wire events and run-file writes. The engine's `Runtime` (and
 * any `RunService`) is one; it is declared here so that events/ does not import the engine above it.
 */
export interface RunEventSource {
  /** Every wire event of every run, in order per run. Returns an unsubscribe function. */
  subscribe(listener: (event: WorkflowEvent) => void): () => void;
  /** Called after each run-file write. Returns an unsubscribe function. */
  onRecord(listener: (record: RunRecord, filename: string) => void): () => void;
  /** Whether a run with this id is active. */
  isActive(runId: string): boolean;
}

export interface EventHubOptions {
  runtime: RunEventSource;
  /** Run files, for runs the hub holds no buffer for. @default none (only buffers) */
  history?: RunHistoryLookup;
  /**
   * The shared replay store, asked for runs this process neither executes nor buffers, before
   * their run file. @default none (one process)
   */
  remote?: RemoteRunEvents;
  /** Finished runs whose buffers are kept (LRU). @default 1000 */
  finishedBuffers?: number;
  /** Serialized bytes all finished runs' buffers may hold (LRU). @default 64 MiB */
  finishedBuffersMaxBytes?: number;
  /** Events kept per run. @default 500 */
  bufferSize?: number;
  /** @default silent */
  logger?: Logger;
  /** Called when a finished run's buffer is evicted to stay within the limits (metrics). */
  onEviction?: () => void;
}

export interface EventHub {
  /**
   * Replay then live for a run the hub knows (see {@link knows}); throws NotFoundError otherwise.
   * The snapshot is taken and the listener registered in one synchronous step, so replay then
   * live has no gap; live events are delivered only when their `seq` is above the replay's last.
   * `onHubClose` is called when the hub closes while subscribed.
   */
  subscribe(runId: string, listener: HubListener, onHubClose?: () => void): HubSubscription;
  /**
   * {@link subscribe} when the hub knows the run; otherwise the sequence rebuilt from the run file
   * (finished, no live events). For a run that is neither active, buffered nor in history:
   * a `pending` subscription when `options.waitForStart` says yes (it is asked then, and only
   * then), else undefined.
   */
  open(
    runId: string,
    listener: HubListener,
    options?: OpenOptions,
  ): Promise<HubSubscription | undefined>;
  /** Rebuilds a run's event sequence from its run file (see `replayFromRecord`). */
  replayFromRecord(record: RunRecord, filename?: string): WorkflowEvent[];
  /** Whether the run is active or its buffer is held. */
  knows(runId: string): boolean;
  /** Adds an event that does not come from the runtime (e.g. evaluation), with the next `seq`. */
  publish(event: DistributiveOmit<WorkflowEvent, 'seq'>): void;
  /**
   * Every event added through {@link publish}, with its `seq` (the run publisher sends them to
   * the shared replay store). Returns an unsubscribe function.
   */
  onPublish(listener: (event: WorkflowEvent) => void): () => void;
  /**
   * Counts, for health checks, tests and benchmarks: `finishedBytes` is the serialized size of
   * the finished buffers kept, `pending` the subscribers waiting for a run to start.
   */
  stats(): {
    activeRuns: number;
    finishedRuns: number;
    finishedBytes: number;
    listeners: number;
    pending: number;
  };
  /** Detaches from the runtime, tells every subscriber, and drops every buffer. */
  close(): void;
}

export interface OpenOptions {
  /** Called when the hub closes (or drops the run's buffer) while subscribed. */
  onHubClose?: () => void;
  /** Replaces the hub's run-file lookup for this call. */
  history?: RunHistoryLookup;
  /**
   * Asked when the run is unknown: true to wait for it to start (a `pending` subscription that
   * holds nothing but the listener until then; unsubscribe to give up). @default never wait
   */
  waitForStart?: () => boolean;
}

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
