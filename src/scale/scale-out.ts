/**
 * The Redis side of one process when `REDIS_URL` is set: its connections (one for commands, one
 * blocking reader), its instance id, the shared replay store's reader, and Redis's state for
 * readiness and admission. `startServer` starts it before anything else so an unreachable Redis
 * is a configuration error (exit 1), and wires the publisher and the history feed from it.
 *
 * Redis lost while running: readiness fails naming Redis, new runs are refused with 503
 * (`admit`), runs already executing go on (their events are dropped from the streams, their run
 * files are complete), and the connections reconnect on their own; everything resumes then.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { createScaleKeys, type ScaleKeys } from './keys.js';
import { checkRedisAtStart, openRedis, redactRedisUrl } from './redis-connection.js';
import { createOrderedSender, type OrderedSender } from './ordered-sender.js';
import { createSharedBreakers, type SharedBreakers } from './shared-breakers.js';
import { closeConnection, settledWithin } from './quiet-close.js';
import { createRemoteEvents, type RemoteEvents } from './remote-events.js';
import { createStreamReader, type StreamReader } from './stream-reader.js';

/** How long the shutdown waits for queued events to reach Redis. */
const DRAIN_TIMEOUT_MS = 2_000;

/** How long the readiness probe waits for Redis's PONG. */
const READY_PING_TIMEOUT_MS = 1_000;

export interface ScaleOutOptions {
  config: Pick<Config, 'redisUrl' | 'redisPrefix'>;
  logger: Logger;
  /** @default a random UUID */
  instanceId?: string;
}

export interface ScaleOut {
  /** The command connection (shared by the publisher, the limits and the replay reads). */
  redis: Redis;
  keys: ScaleKeys;
  /** This process's id among the deployment's (record notifications, wake stream). */
  instanceId: string;
  /** The process's one blocking stream reader. */
  reader: StreamReader;
  /** Replay + live of runs other processes execute (the hub's `remote`). */
  remote: RemoteEvents;
  /** LLM circuit transitions shared with the other instances (the router's `breakerSharing`). */
  breakers: SharedBreakers;
  /** Orders and keeps the publisher's commands (shutdown waits for it to drain). */
  sender: OrderedSender;
  /** The record stream's last id when this process started: its history feed follows from it. */
  recordsFrom: string;
  /** Whether the command connection is up now (no round trip). */
  available(): boolean;
  /** Tells the listeners a run file written elsewhere was indexed (the history feed calls it). */
  indexed(filename: string): void;
  /** Listens for {@link indexed}; returns the unsubscribe function (tests wait on it). */
  onIndexed(listener: (filename: string) => void): () => void;
  /** Readiness: throws a message naming Redis (never its password) when it does not answer. */
  check(): Promise<void>;
  /** Admission of a new run: throws the 503 `dependency_unavailable` while Redis is away. */
  admit(): void;
  /** Stops reading and closes the connections, after the pending commands were answered. */
  close(): Promise<void>;
}

/** Starts the Redis side; rejects with a ConfigError when Redis does not answer at start. */
export async function startScaleOut(options: ScaleOutOptions): Promise<ScaleOut> {
  const url = options.config.redisUrl;
  if (url === undefined) throw new Error('startScaleOut needs REDIS_URL');
  const { logger } = options;
  await checkRedisAtStart(url);
  const instanceId = options.instanceId ?? randomUUID();
  const keys = createScaleKeys(options.config.redisPrefix);
  const redis = openRedis({ url, logger, name: 'commands' });
  const reader = createStreamReader({
    url,
    redis,
    wakeKey: `${options.config.redisPrefix}:wake:${instanceId}`,
    logger,
  });
  const remote = createRemoteEvents({ redis, reader, keys, logger });
  const breakers = createSharedBreakers({ url, redis, keys, instanceId, logger });
  const sender = createOrderedSender(redis, logger);
  let recordsFrom = '0-0';
  try {
    const newest = await redis.xrevrange(keys.records, '+', '-', 'COUNT', 1);
    recordsFrom = newest[0]?.[0] ?? '0-0';
  } catch (error) {
    logger.warn(
      { err: errorMessage(error) },
      'record stream position unknown; following from the start',
    );
  }
  const where = redactRedisUrl(url);
  const indexedListeners = new Set<(filename: string) => void>();
  let closed = false;

  return {
    redis,
    keys,
    instanceId,
    reader,
    remote,
    breakers,
    sender,
    recordsFrom,
    indexed(filename) {
      for (const listener of indexedListeners) listener(filename);
    },
    onIndexed(listener) {
      indexedListeners.add(listener);
      return () => {
        indexedListeners.delete(listener);
      };
    },
    available: () => redis.status === 'ready',
    async check() {
      if (redis.status !== 'ready') throw new Error('Redis is unreachable');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`Redis at ${where} did not answer within ${READY_PING_TIMEOUT_MS} ms`),
            ),
          READY_PING_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([redis.ping(), timeout]);
      } catch (error) {
        // The detail reaches load balancers: Redis is named, its address is only logged.
        logger.debug({ redis: where, err: errorMessage(error) }, 'readiness: Redis check failed');
        throw new Error(
          error instanceof Error && error.message.startsWith('Redis did not')
            ? error.message
            : 'Redis is unreachable',
          { cause: error },
        );
      } finally {
        clearTimeout(timer);
      }
    },
    admit() {
      if (redis.status === 'ready') return;
      throw new DependencyError(
        'Redis is unavailable: new runs are refused until it is back (runs already executing go on)',
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      remote.close();
      breakers.close();
      await reader.close();
      // The last events of the runs that ended during the shutdown, unless Redis is away.
      if (redis.status === 'ready')
        await settledWithin(sender.drained(), DRAIN_TIMEOUT_MS, undefined);
      sender.close();
      // QUIT waits for the replies of commands already sent (the last events of finished runs),
      // within a bound; a Redis that is away gets no QUIT, only a disconnect.
      await closeConnection(redis);
    },
  };
}
