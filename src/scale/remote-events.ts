/**
 * The reading half of the shared replay store: replay then live for runs executed by another
 * process, from their Redis streams. One watch per run followed by this process, shared by all
 * its clients of that run: the watch holds the run's last 500 events (what a late joiner on this
 * process is replayed, with no Redis round trip) and is fed by the process's one stream reader.
 *
 * Seam: a watch reads the stream with XRANGE, then follows it from the last id read, so the
 * replay and the live events neither overlap nor leave a gap. Clients joining a watch already
 * fed get its buffer, and live events above its last `seq`, in one synchronous step (as the
 * in-process hub does).
 */
import type { Redis } from 'ioredis';
import { errorMessage } from '../errors.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { Logger } from '../log.js';
import type { HubListener, HubSubscription, RemoteRunEvents } from '../events/hub.js';
import { RingBuffer } from '../events/ring-buffer.js';
import { RUN_STREAM_MAXLEN, type ScaleKeys } from './keys.js';
import { decodeStreamEntry } from './stream-entry.js';
import type { StreamEntries, StreamReader } from './stream-reader.js';

export interface RemoteEventsOptions {
  /** A command connection (XRANGE). */
  redis: Redis;
  reader: StreamReader;
  keys: ScaleKeys;
  logger: Logger;
}

interface Subscriber {
  listener: HubListener;
  onClose: (() => void) | undefined;
  lastSeq: number;
}

interface Watch {
  runId: string;
  buffer: RingBuffer<WorkflowEvent>;
  subscribers: Set<Subscriber>;
  lastSeq: number;
  finished: boolean;
  /** Settles when the XRANGE is done (and the watch follows the stream, unless finished). */
  ready: Promise<void>;
  following: boolean;
  unfollow: () => void;
}

export interface RemoteEvents extends RemoteRunEvents {
  /** Whether the run's stream is followed live now (benchmarks wait for it). */
  follows(runId: string): boolean;
  /** Runs followed and their clients (health, tests). */
  stats(): { runs: number; listeners: number };
  /** Tells every client the store is closing and stops following. */
  close(): void;
}

export function createRemoteEvents(options: RemoteEventsOptions): RemoteEvents {
  const { redis, reader, keys, logger } = options;
  const watches = new Map<string, Watch>();
  let closed = false;

  const drop = (watch: Watch): void => {
    watch.unfollow();
    if (watches.get(watch.runId) === watch) watches.delete(watch.runId);
  };

  const accept = (watch: Watch, event: WorkflowEvent, last: boolean): void => {
    // A run resumed by another worker (its worker died) numbers its events from 0 again, its
    // finished steps replayed first: the watch and its clients start over with it.
    if (restartsRun(event) && watch.lastSeq >= 0) {
      watch.buffer.clear();
      watch.lastSeq = -1;
      for (const subscriber of watch.subscribers) subscriber.lastSeq = -1;
    }
    // An active run's id cannot be reused, so an old `seq` is an event appended twice (a
    // pipeline sent again after a lost connection): kept once.
    if (event.seq <= watch.lastSeq) return;
    watch.lastSeq = event.seq;
    watch.buffer.push(event);
    for (const subscriber of watch.subscribers) {
      if (event.seq <= subscriber.lastSeq) continue;
      subscriber.lastSeq = event.seq;
      try {
        subscriber.listener(event, last);
      } catch (error) {
        logger.warn({ runId: watch.runId, err: errorMessage(error) }, 'event listener failed');
      }
    }
    if (last) {
      watch.finished = true;
      watch.subscribers.clear();
      drop(watch);
    }
  };

  const onEntries = (watch: Watch) => (entries: StreamEntries) => {
    for (const [id, fields] of entries) {
      const entry = decodeStreamEntry(id, fields);
      if (entry !== undefined) accept(watch, entry.event, entry.last);
      if (watch.finished) return;
    }
  };

  /**
   * Whether the run is claimed (accepted by some instance, maybe not started or with its first
   * events not yet in its stream): a client is then served what comes, not a 404.
   */
  const claimed = async (runId: string): Promise<boolean> =>
    (await redis.exists(keys.claim(runId))) === 1;

  /** Reads the stream and follows it; resolves false when it holds nothing and none will come. */
  const load = async (watch: Watch, waitForStart: boolean): Promise<boolean> => {
    const key = keys.runEvents(watch.runId);
    const entries = await redis.xrange(key, '-', '+', 'COUNT', RUN_STREAM_MAXLEN);
    if (entries.length === 0 && !waitForStart && !(await claimed(watch.runId))) return false;
    let lastId = '0-0';
    for (const [id, fields] of entries) {
      lastId = id;
      const entry = decodeStreamEntry(id, fields);
      if (entry !== undefined && restartsRun(entry.event) && watch.lastSeq >= 0) {
        watch.buffer.clear();
        watch.lastSeq = -1;
      }
      // An event appended twice (a pipeline sent again after a lost connection) is kept once.
      if (entry === undefined || entry.event.seq <= watch.lastSeq) continue;
      watch.lastSeq = entry.event.seq;
      watch.buffer.push(entry.event);
      if (entry.last) watch.finished = true;
    }
    if (!watch.finished && !closed) {
      watch.unfollow = reader.follow(key, lastId, onEntries(watch));
      watch.following = true;
    }
    return true;
  };

  const join = (watch: Watch, listener: HubListener, onClose?: () => void): HubSubscription => {
    const replay = watch.buffer.toArray();
    if (watch.finished) {
      return { replay, finished: true, source: 'buffer', unsubscribe: () => undefined };
    }
    const subscriber: Subscriber = { listener, onClose, lastSeq: replay.at(-1)?.seq ?? -1 };
    watch.subscribers.add(subscriber);
    return {
      replay,
      finished: false,
      source: replay.length === 0 ? 'pending' : 'buffer',
      unsubscribe: () => {
        watch.subscribers.delete(subscriber);
        if (watch.subscribers.size === 0) drop(watch);
      },
    };
  };

  return {
    async open(runId, listener, openOptions = {}) {
      // Redis away: the caller serves the run file (or waits in-process) at once, rather than
      // after the connection's retries.
      if (closed || redis.status !== 'ready') return undefined;
      const waitForStart = openOptions.waitForStart === true;
      const existing = watches.get(runId);
      if (existing !== undefined) {
        await existing.ready;
        if (watches.get(runId) === existing && !existing.finished) {
          // Another client waits for the run to start: nothing is known of it yet, so a caller
          // that does not wait must look elsewhere (the run file) rather than wait too.
          if (existing.buffer.size === 0 && !waitForStart && !(await claimed(runId))) {
            return undefined;
          }
          return join(existing, listener, openOptions.onClose);
        }
      }
      let settle: () => void = () => undefined;
      const watch: Watch = {
        runId,
        buffer: new RingBuffer<WorkflowEvent>(RUN_STREAM_MAXLEN),
        subscribers: new Set(),
        lastSeq: -1,
        finished: false,
        ready: new Promise<void>((resolve) => (settle = resolve)),
        unfollow: () => undefined,
        following: false,
      };
      watches.set(runId, watch);
      let found: boolean;
      try {
        found = await load(watch, waitForStart);
      } catch (error) {
        // Redis away: the caller falls back to the run file (or to waiting in-process).
        logger.warn({ runId, err: errorMessage(error) }, 'shared event stream unavailable');
        found = false;
      } finally {
        settle();
      }
      if (!found || closed) {
        drop(watch);
        return undefined;
      }
      const subscription = join(watch, listener, openOptions.onClose);
      if (watch.finished) drop(watch);
      return subscription;
    },
    follows: (runId) => watches.get(runId)?.following === true,
    stats() {
      let listeners = 0;
      for (const watch of watches.values()) listeners += watch.subscribers.size;
      return { runs: watches.size, listeners };
    },
    close() {
      if (closed) return;
      closed = true;
      const all = [...watches.values()];
      watches.clear();
      for (const watch of all) {
        watch.unfollow();
        const subscribers = [...watch.subscribers];
        watch.subscribers.clear();
        for (const subscriber of subscribers) {
          try {
            subscriber.onClose?.();
          } catch (error) {
            logger.warn({ runId: watch.runId, err: errorMessage(error) }, 'close handler failed');
          }
        }
      }
    },
  };
}

/** A resumed run's `workflow_start` (seq 0 again, `resumed: true`): its sequence starts over. */
function restartsRun(event: WorkflowEvent): boolean {
  return event.type === 'workflow_start' && event.seq === 0 && event.resumed === true;
}
