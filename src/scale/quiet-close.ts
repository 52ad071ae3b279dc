/**
 * Closing Redis-backed parts while Redis may be away. A command sent to a connection that is
 * down waits in its offline queue until Redis returns, so a shutdown must not send one then:
 * unsubscribing is skipped, QUIT becomes a plain disconnect, and closes that need Redis (BullMQ's)
 * are given a bounded wait.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

/** How long a close that needs Redis is waited for while Redis is away. */
export const CLOSE_WITHOUT_REDIS_MS = 1_000;

/**
 * Unsubscribes while connected; a subscription of a dropped connection ends with it anyway.
 * `subscribed` (the SUBSCRIBE's own promise) is awaited only while connected: a SUBSCRIBE still
 * queued for a Redis that is away gets no reply until Redis returns, so awaiting it then hangs
 * the shutdown (it is rejected when the connection is dropped; callers catch it).
 */
export async function unsubscribeQuietly(
  redis: Redis,
  channel: string,
  subscribed: Promise<unknown> = Promise.resolve(),
): Promise<void> {
  if (redis.status !== 'ready') return;
  await subscribed.catch(() => undefined);
  if (redis.status !== 'ready') return;
  await redis.unsubscribe(channel).catch(() => undefined);
}

/** QUIT (after the replies of what was sent) when connected, else drop the connection. */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

/**
 * Waits for `closing` when `redis` is up; while it is away, at most
 * {@link CLOSE_WITHOUT_REDIS_MS} (then the connections are dropped under it).
 * @returns whether `closing` settled (false: cut short)
 */
export async function closeWithin(redis: Redis, closing: Promise<unknown>): Promise<boolean> {
  const settled = closing.then(
    () => true,
    () => true,
  );
  if (redis.status === 'ready') return settled;
  return settledWithin(settled, CLOSE_WITHOUT_REDIS_MS, false);
}

/** `promise`'s value, or `fallback` after `ms`. */
async function settledWithin<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<T>((resolve) => {
        timer = setTimeout(() => resolve(fallback), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Drops the blocking connection of a BullMQ Worker whose close was cut short. The Worker blocks
 * on a duplicate of the connection it was given, which only its own close ends (by QUIT, which
 * waits for a Redis that is away): left alone it reconnects forever and keeps the process alive.
 */
export async function dropBlockingConnection(worker: Worker): Promise<void> {
  // Resolves with the duplicate once it was set up (at start, with Redis there).
  const ready = worker.waitUntilReady().catch(() => undefined);
  const blocking = await settledWithin(ready, CLOSE_WITHOUT_REDIS_MS, undefined);
  blocking?.disconnect();
}
