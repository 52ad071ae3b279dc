/**
 * Connections to the deployment's Redis (`REDIS_URL`). Every scale-out part (the run queue, the
 * event streams, the history notifications, the shared limits) opens its connections here, so
 * they share one policy: retry forever with a capped backoff while Redis is away (the process
 * keeps serving what it can and readiness names Redis), never an unhandled `error` event, and a
 * start-up check that turns "Redis unreachable" into a configuration error naming the URL
 * without its password.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';

/** Backoff between reconnect attempts while Redis is unreachable: 50 ms growing to 2 s. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/** How long start-up waits for Redis before refusing to start. */
export const REDIS_START_TIMEOUT_MS = 5_000;

export interface RedisConnectionOptions {
  /** `REDIS_URL`. */
  url: string;
  logger: Logger;
  /** A name for logs and `CLIENT SETNAME` (say `queue`, `events`, `limits`). */
  name: string;
  /**
   * BullMQ's blocking connections need `maxRetriesPerRequest: null`; plain command connections
   * fail a command after a few retries instead of queueing it forever while Redis is away.
   * @default false
   */
  blocking?: boolean;
}

/** `redis://user:secret@host:6379/0` → `redis://user:***@host:6379/0`: URLs in logs and errors. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis://(unparseable URL)';
  }
}

/**
 * Opens a connection that reconnects on its own. Errors are logged once per outage (not once per
 * retry) and never thrown as an unhandled `error` event.
 */
export function openRedis(options: RedisConnectionOptions): Redis {
  const redisOptions: RedisOptions = {
    connectionName: `agentic:${options.name}`,
    lazyConnect: false,
    enableOfflineQueue: true,
    maxRetriesPerRequest: options.blocking === true ? null : 2,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), MAX_RECONNECT_DELAY_MS),
  };
  const redis = new Redis(options.url, redisOptions);
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    options.logger.warn(
      { redis: redactRedisUrl(options.url), connection: options.name, err: error.message },
      'Redis connection lost; retrying',
    );
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    options.logger.info({ connection: options.name }, 'Redis connection back');
  });
  return redis;
}

/**
 * Start-up check: PING within {@link REDIS_START_TIMEOUT_MS}, or a {@link ConfigError} naming the
 * (redacted) URL and what went wrong, so `npm start` exits 1 with a clear message.
 */
export async function checkRedisAtStart(
  url: string,
  timeoutMs: number = REDIS_START_TIMEOUT_MS,
): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let lastError = '';
  probe.on('error', (error: Error) => {
    lastError = error.message;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ConfigError([
      `REDIS_URL=${redactRedisUrl(url)}: Redis is unreachable (${lastError || message || 'no answer'}). Start Redis or unset REDIS_URL to run as one process.`,
    ]);
  } finally {
    probe.disconnect();
  }
}
