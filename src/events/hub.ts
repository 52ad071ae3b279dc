import { NotFoundError, ERROR_CODES, errorMessage } from '../errors.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import { createSilentLogger } from '../log.js';
import { endsStream, evaluationRequested } from './evaluation.js';
import {
  DEFAULT_FINISHED_BUFFERS,
  DEFAULT_FINISHED_BUFFERS_MAX_BYTES,
  FinishedBuffers,
} from './finished-buffers.js';
import type {
  EventHub,
  EventHubOptions,
  HubListener,
  HubSubscription,
  RemoteRunEvents,
} from './hub-types.js';
import { replayFromRecord } from './replay-from-record.js';
import { RingBuffer } from './ring-buffer.js';

/** Events kept per run for replay (spec: "a circular in-process buffer of 500 events"). */
export const REPLAY_BUFFER_SIZE = 500;
export { DEFAULT_FINISHED_BUFFERS, DEFAULT_FINISHED_BUFFERS_MAX_BYTES };
export type {
  EventHub,
  EventHubOptions,
  HubListener,
  HubSubscription,
  OpenOptions,
  RemoteRunEvents,
  RunEventSource,
  RunHistoryLookup,
} from './hub-types.js';

interface Subscriber {
  listener: HubListener;
  onHubClose: (() => void) | undefined;
  lastSeq: number;
}

interface Channel {
  runId: string;
  buffer: RingBuffer<WorkflowEvent>;
  subscribers: Set<Subscriber>;
  /** Seq of the newest event seen; -1 before the first. */
  lastSeq: number;
  expectEvaluation: boolean;
  /** `workflow_end` seen: the buffer lives among the finished buffers from then on. */
  ended: boolean;
  /** The stream's last event seen: nothing more will be delivered. */
  finished: boolean;
}

/**
 * The event hub: one replay buffer per run, fan-out to live subscribers (WebSocket and SSE),
 * bounded memory. Active runs' buffers live in a map until `workflow_end`; finished runs' buffers
 * move to an LRU bounded by count (`finishedBuffers`) and by serialized bytes
 * (`finishedBuffersMaxBytes`), so memory stays flat however many runs go by, whatever their
 * size. Subscribers waiting for a run that has not started hold only their listener, in a map
 * entry removed when they unsubscribe or the run starts.
 */
export function createEventHub(options: EventHubOptions): EventHub {
  const { runtime, history } = options;
  const bufferSize = options.bufferSize ?? REPLAY_BUFFER_SIZE;
  const logger = options.logger ?? createSilentLogger();
  const active = new Map<string, Channel>();
  /** Subscribers of runs not started yet, by run id. */
  const pending = new Map<string, Set<Subscriber>>();
  const finished = new FinishedBuffers<Channel>({
    maxEntries: options.finishedBuffers ?? DEFAULT_FINISHED_BUFFERS,
    maxBytes: options.finishedBuffersMaxBytes ?? DEFAULT_FINISHED_BUFFERS_MAX_BYTES,
    eventsOf: (channel) => channel.buffer.toArray(),
    // A run still awaiting its evaluation events may be dropped under heavy churn: its
    // subscribers are told, so their connections do not wait forever.
    onDrop: (channel) => {
      options.onEviction?.();
      closeSubscribers(channel);
    },
  });
  let closed = false;
  const publishListeners = new Set<(event: WorkflowEvent) => void>();

  const tellClosed = (runId: string, subscribers: Iterable<Subscriber>): void => {
    for (const subscriber of subscribers) {
      try {
        subscriber.onHubClose?.();
      } catch (error) {
        logger.warn({ runId, err: errorMessage(error) }, 'close handler failed');
      }
    }
  };

  const closeSubscribers = (channel: Channel): void => {
    const subscribers = [...channel.subscribers];
    channel.subscribers.clear();
    tellClosed(channel.runId, subscribers);
  };

  const newChannel = (runId: string): Channel => {
    const channel: Channel = {
      runId,
      buffer: new RingBuffer<WorkflowEvent>(bufferSize),
      subscribers: new Set(),
      lastSeq: -1,
      expectEvaluation: false,
      ended: false,
      finished: false,
    };
    active.set(runId, channel);
    // Waiting subscribers have seen nothing (lastSeq -1): they get every event from here on.
    const waiting = pending.get(runId);
    if (waiting !== undefined) {
      pending.delete(runId);
      for (const subscriber of waiting) channel.subscribers.add(subscriber);
    }
    return channel;
  };

  const find = (runId: string): Channel | undefined => active.get(runId) ?? finished.peek(runId);

  const deliver = (channel: Channel, event: WorkflowEvent, last: boolean): void => {
    for (const subscriber of channel.subscribers) {
      if (event.seq <= subscriber.lastSeq) continue;
      subscriber.lastSeq = event.seq;
      try {
        subscriber.listener(event, last);
      } catch (error) {
        logger.warn({ runId: channel.runId, err: errorMessage(error) }, 'event listener failed');
      }
    }
  };

  const accept = (event: WorkflowEvent): void => {
    if (closed) return;
    let channel = find(event.run_id);
    if (channel !== undefined && event.seq <= channel.lastSeq) {
      // A finished run's id may be reused by a new run (only active ids conflict): start over.
      if (event.type === 'workflow_start' && event.seq === 0 && channel.ended) {
        finished.delete(event.run_id);
        active.delete(event.run_id);
        closeSubscribers(channel);
        channel = undefined;
      } else {
        logger.warn({ runId: event.run_id, seq: event.seq }, 'dropped out-of-order event');
        return;
      }
    }
    if (channel === undefined) {
      channel = newChannel(event.run_id);
      // Evaluation events come after workflow_end; a run evicted by then must not be parked
      // among active runs, where nothing would ever remove it.
      if (event.type === 'evaluation_start' || event.type === 'evaluation_complete') {
        channel.ended = true;
        active.delete(channel.runId);
      }
    }
    channel.lastSeq = event.seq;
    channel.buffer.push(event);
    if (event.type === 'evaluation_start') channel.expectEvaluation = true;
    const last = !channel.finished && endsStream(event, channel.expectEvaluation);
    if (last) channel.finished = true;
    if (event.type === 'workflow_end' && !channel.ended) {
      channel.ended = true;
      active.delete(channel.runId);
    }
    deliver(channel, event, last);
    if (last) channel.subscribers.clear();
    // Weighed after delivery: a buffer too large to keep tells only subscribers still waiting
    // (for evaluation events), never before they got this event.
    if (channel.ended) finished.keep(channel.runId, channel);
  };

  const recordSeen = (record: RunRecord): void => {
    if (closed || !evaluationRequested(record)) return;
    const channel =
      find(record.run_id) ?? (record.status === 'running' ? newChannel(record.run_id) : undefined);
    if (channel !== undefined && !channel.finished) channel.expectEvaluation = true;
  };

  const unsubscribeRuntime = runtime.subscribe(accept);
  const unsubscribeRecords = runtime.onRecord(recordSeen);

  const knows = (runId: string): boolean =>
    !closed && (find(runId) !== undefined || runtime.isActive(runId));

  const waitFor = (runId: string, listener: HubListener, onHubClose?: () => void) => {
    const subscriber: Subscriber = { listener, onHubClose, lastSeq: -1 };
    let waiting = pending.get(runId);
    if (waiting === undefined) pending.set(runId, (waiting = new Set()));
    waiting.add(subscriber);
    const subscription: HubSubscription = {
      replay: [],
      finished: false,
      source: 'pending',
      unsubscribe: () => {
        const set = pending.get(runId);
        if (set?.delete(subscriber) === true && set.size === 0) pending.delete(runId);
        find(runId)?.subscribers.delete(subscriber);
      },
    };
    return subscription;
  };

  const subscribe = (
    runId: string,
    listener: HubListener,
    onHubClose?: () => void,
  ): HubSubscription => {
    if (!knows(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    const channel = find(runId) ?? newChannel(runId);
    const replay = channel.buffer.toArray();
    if (channel.finished) {
      return { replay, finished: true, source: 'buffer', unsubscribe: () => undefined };
    }
    const subscriber: Subscriber = { listener, onHubClose, lastSeq: replay.at(-1)?.seq ?? -1 };
    channel.subscribers.add(subscriber);
    return {
      replay,
      finished: false,
      source: 'buffer',
      unsubscribe: () => {
        channel.subscribers.delete(subscriber);
      },
    };
  };

  /**
   * Waits for a run to start in this process or in another one: followed in both places, with
   * one `seq` filter, so whichever delivers an event first delivers it and the other's copy is
   * dropped (both deliver every event from `seq` 0, in order). The shared stream is opened
   * first: from the in-process registration to the return nothing yields, as in {@link open}.
   */
  const waitHereOrThere = async (
    remote: RemoteRunEvents,
    runId: string,
    listener: HubListener,
    onHubClose?: () => void,
  ): Promise<HubSubscription | undefined> => {
    let lastSeq = -1;
    let done = false;
    const parts: (() => void)[] = [];
    const stop = (): void => {
      done = true;
      for (const unsubscribe of parts.splice(0)) unsubscribe();
    };
    const merged: HubListener = (event, last) => {
      if (done || event.seq <= lastSeq) return;
      lastSeq = event.seq;
      listener(event, last);
      if (last) stop();
    };
    const shared = await remote.open(runId, merged, {
      ...(onHubClose ? { onClose: onHubClose } : {}),
      waitForStart: true,
    });
    if (knows(runId)) {
      shared?.unsubscribe();
      return subscribe(runId, listener, onHubClose);
    }
    if (closed) {
      shared?.unsubscribe();
      return undefined;
    }
    if (shared === undefined) return waitFor(runId, listener, onHubClose);
    lastSeq = shared.replay.at(-1)?.seq ?? -1;
    if (shared.finished) return shared;
    parts.push(shared.unsubscribe);
    if (shared.replay.length === 0) parts.push(waitFor(runId, merged, onHubClose).unsubscribe);
    return { ...shared, unsubscribe: stop };
  };

  return {
    subscribe,
    async open(runId, listener, openOptions = {}) {
      const { onHubClose } = openOptions;
      if (knows(runId)) return subscribe(runId, listener, onHubClose);
      const { remote } = options;
      if (remote !== undefined) {
        const shared = await remote.open(runId, listener, {
          ...(onHubClose ? { onClose: onHubClose } : {}),
        });
        if (knows(runId)) {
          shared?.unsubscribe();
          return subscribe(runId, listener, onHubClose);
        }
        if (shared !== undefined) return shared;
      }
      const lookup = openOptions.history ?? history;
      // An id the start-up scan has not reached yet is not unknown: waiting for the index keeps
      // a client of a finished run from waiting for a start that never comes.
      await lookup?.whenLoaded?.();
      const found = await lookup?.getByRunId(runId);
      // The run may have started (or been buffered) while the file was looked up. From here to
      // the return nothing yields, so a waiting subscriber misses no event.
      if (knows(runId)) return subscribe(runId, listener, onHubClose);
      if (found === undefined) {
        if (closed || openOptions.waitForStart?.() !== true) return undefined;
        if (remote === undefined) return waitFor(runId, listener, onHubClose);
        return waitHereOrThere(remote, runId, listener, onHubClose);
      }
      return {
        replay: replayFromRecord(found.record, found.filename),
        finished: true,
        source: 'record',
        unsubscribe: () => undefined,
      };
    },
    replayFromRecord,
    knows,
    publish(event) {
      const channel = find(event.run_id);
      const sequenced = { ...event, seq: (channel?.lastSeq ?? -1) + 1 };
      accept(sequenced);
      if (closed) return;
      for (const listener of publishListeners) {
        try {
          listener(sequenced);
        } catch (error) {
          logger.warn({ runId: event.run_id, err: errorMessage(error) }, 'publish listener failed');
        }
      }
    },
    onPublish(listener) {
      publishListeners.add(listener);
      return () => {
        publishListeners.delete(listener);
      };
    },
    stats() {
      let listeners = 0;
      for (const channel of active.values()) listeners += channel.subscribers.size;
      for (const channel of finished.values()) listeners += channel.subscribers.size;
      let waiting = 0;
      for (const set of pending.values()) waiting += set.size;
      return {
        activeRuns: active.size,
        finishedRuns: finished.size,
        finishedBytes: finished.bytes,
        listeners,
        pending: waiting,
      };
    },
    close() {
      if (closed) return;
      closed = true;
      unsubscribeRuntime();
      unsubscribeRecords();
      const channels = [...active.values(), ...finished.values()];
      const waiting = [...pending.entries()];
      active.clear();
      finished.clear();
      pending.clear();
      for (const channel of channels) closeSubscribers(channel);
      for (const [runId, subscribers] of waiting) tellClosed(runId, subscribers);
    },
  };
}
