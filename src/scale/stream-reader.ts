/**
 * One blocking reader per process for every Redis stream it follows (the runs being watched by
 * its WebSocket and SSE clients, and the record stream its history index follows): a single
 * `XREAD BLOCK` over all of them on a dedicated connection, instead of a blocking connection
 * per client. Each followed stream has a cursor (the last id delivered), so a stream's entries
 * are delivered once, in order, from where its follower said to start.
 *
 * A new follower must join the read in flight at once, or its first live events would wait for
 * the block to time out. The read also follows a wake stream of this process, and `follow`
 * appends to it from the command connection: whichever reaches Redis first, the read returns
 * (an entry added before the read starts is past the read's cursor), with no race.
 */
import type { Redis } from 'ioredis';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { openRedis } from './redis-connection.js';

/** Longest a read blocks before it is reissued (also bounds how stale a cursor set gets). */
const BLOCK_MS = 5_000;
/** Pause before reissuing a read that failed (Redis away), so the loop does not spin. */
const RETRY_MS = 200;
/** How long the wake stream outlives its last use. */
const WAKE_TTL_MS = 60_000;

export type StreamEntries = [id: string, fields: string[]][];

export interface StreamReaderOptions {
  /** `REDIS_URL`: the reader opens its own blocking connection. */
  url: string;
  /** A command connection (for the wake stream). */
  redis: Redis;
  /** The key of this process's wake stream (unique per process). */
  wakeKey: string;
  logger: Logger;
}

export interface StreamReader {
  /**
   * Delivers the entries of `key` after `fromId` (`0-0`: all of them, including a stream that does
   * not exist yet), in order, to `onEntries`, until the returned function is called. One follower
   * per key: following a key already followed replaces its follower.
   */
  follow(key: string, fromId: string, onEntries: (entries: StreamEntries) => void): () => void;
  /** Keys followed (tests, health). */
  readonly following: number;
  /** Stops the loop and closes the blocking connection. */
  close(): Promise<void>;
}

interface Follower {
  cursor: string;
  onEntries: (entries: StreamEntries) => void;
}

export function createStreamReader(options: StreamReaderOptions): StreamReader {
  const { redis, wakeKey, logger } = options;
  const blocking = openRedis({ url: options.url, logger, name: 'events-reader', blocking: true });
  const followers = new Map<string, Follower>();
  let wakeCursor = '0-0';
  let closed = false;
  let idle: (() => void) | undefined;
  // A read queued while Redis is away never settles once the connection is closed by hand
  // (ioredis keeps its offline queue): the loop stops on this instead.
  let stopped: () => void = () => undefined;
  const stopping = new Promise<null>((resolve) => (stopped = () => resolve(null)));

  const wake = (): void => {
    if (idle !== undefined) {
      const resolve = idle;
      idle = undefined;
      resolve();
      return;
    }
    redis
      .pipeline()
      .xadd(wakeKey, 'MAXLEN', 1, '*', 'w', '1')
      .pexpire(wakeKey, WAKE_TTL_MS)
      .exec()
      .catch((error: unknown) => {
        // The read in flight then picks the follower up when its block ends (at most BLOCK_MS).
        logger.debug({ err: errorMessage(error) }, 'stream reader wake-up failed');
      });
  };

  const readOnce = async (): Promise<void> => {
    const snapshot = [...followers.entries()];
    const keys = [wakeKey, ...snapshot.map(([key]) => key)];
    const ids = [wakeCursor, ...snapshot.map(([, follower]) => follower.cursor)];
    const reply = await Promise.race([
      blocking.xread('BLOCK', BLOCK_MS, 'STREAMS', ...keys, ...ids),
      stopping,
    ]);
    if (reply === null || closed) return;
    const taken = new Map(snapshot);
    for (const [key, entries] of reply) {
      const last = entries.at(-1);
      if (last === undefined) continue;
      if (key === wakeKey) {
        wakeCursor = last[0];
        continue;
      }
      // A follower replaced or gone while the read was in flight gets nothing from it: the
      // entries were read from the old cursor.
      const follower = taken.get(key);
      if (follower === undefined || followers.get(key) !== follower) continue;
      follower.cursor = last[0];
      try {
        follower.onEntries(entries);
      } catch (error) {
        logger.warn({ key, err: errorMessage(error) }, 'stream follower failed');
      }
    }
  };

  const loop = async (): Promise<void> => {
    while (!closed) {
      if (followers.size === 0) {
        await new Promise<void>((resolve) => (idle = resolve));
        continue;
      }
      try {
        await readOnce();
      } catch (error) {
        if (closed) break;
        logger.debug({ err: errorMessage(error) }, 'stream read failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  };
  const running = loop();

  return {
    follow(key, fromId, onEntries) {
      const follower: Follower = { cursor: fromId, onEntries };
      followers.set(key, follower);
      if (!closed) wake();
      return () => {
        if (followers.get(key) === follower) followers.delete(key);
      };
    },
    get following() {
      return followers.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      followers.clear();
      idle?.();
      idle = undefined;
      stopped();
      blocking.disconnect();
      await running;
    },
  };
}
