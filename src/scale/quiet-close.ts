/**
 * Closing Redis-backed parts while Redis may be away. A command written to a connection that
 * is down (or that ioredis has not yet seen go down: its `status` lags the socket) is resent
 * once Redis returns, so its promise stays pending until then. A shutdown therefore never
 * awaits a Redis reply without a bound: each close that needs Redis gets
 * {@link CLOSE_WITH_REDIS_MS} (or {@link CLOSE_WITHOUT_REDIS_MS} while the connection is known
 * to be away), and what did not finish in that time is dropped with a disconnect, which rejects
 * the commands still pending.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

/** How long a close that needs Redis is waited for while the connection is known to be away. */
export const CLOSE_WITHOUT_REDIS_MS = 1_000;
/** How long a close that needs Redis is waited for while the connection looks up. */
export const CLOSE_WITH_REDIS_MS = 5_000;

/** The bound for a close over `redis`, by what its status says now. */
const boundFor = (redis: Redis): number =>
  redis.status === 'ready' ? CLOSE_WITH_REDIS_MS : CLOSE_WITHOUT_REDIS_MS;

/**
 * Unsubscribes while connected, within a bound; a subscription of a dropped connection ends
 * with it anyway. `subscribed` (the SUBSCRIBE's own promise) is part of the wait: a SUBSCRIBE
 * still queued for a Redis that is away gets no reply until Redis returns (it is rejected when
 * the connection is dropped; callers catch it).
 */
export async function unsubscribeQuietly(
  redis: Redis,
  channel: string,
  subscribed: Promise<unknown> = Promise.resolve(),
): Promise<void> {
  if (redis.status !== 'ready') return;
  const unsubscribing = subscribed
    .catch(() => undefined)
    .then(() => (redis.status === 'ready' ? redis.unsubscribe(channel) : undefined))
    .catch(() => undefined);
  await settledWithin(unsubscribing, CLOSE_WITH_REDIS_MS, undefined);
}

/**
 * QUIT (after the replies of what was sent) when connected and Redis answers within the bound;
 * otherwise the connection is dropped.
 */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    const quit = redis.quit().then(
      () => true,
      () => false,
    );
    if (await settledWithin(quit, CLOSE_WITH_REDIS_MS, false)) return;
  }
  redis.disconnect();
}

/**
 * Waits for `closing`, a close that needs Redis (BullMQ's), at most
 * {@link CLOSE_WITH_REDIS_MS} while `redis` looks up and {@link CLOSE_WITHOUT_REDIS_MS} while it
 * is away; the caller then drops the connections under it.
 * @returns whether `closing` settled (false: cut short)
 */
export async function closeWithin(redis: Redis, closing: Promise<unknown>): Promise<boolean> {
  const settled = closing.then(
    () => true,
    () => true,
  );
  return settledWithin(settled, boundFor(redis), false);
}

/** `promise`'s value, or `fallback` after `ms`. */
export async function settledWithin<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
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
 * Lets go of a BullMQ Worker whose close was cut short (Redis lost during it). Its unforced close
 * waits for its blocking connection's `end`, which ioredis never emits for a connection without
 * a socket (one reconnecting), so it stays stuck before it stops the lock renewal timer and
 * drops that duplicate connection, which reconnects forever: both would keep the process alive.
 * Its main loop does not reconnect the connection once the Worker is closing.
 */
export async function abandonWorker(worker: Worker): Promise<void> {
  // BullMQ 5 declares `lockManager` protected; its close() only clears the renewal timer.
  const { lockManager } = worker as unknown as { lockManager?: { close(): Promise<void> } };
  await lockManager?.close().catch(() => undefined);
  // Resolves with the duplicate once it was set up (at start, with Redis there).
  const ready = worker.waitUntilReady().catch(() => undefined);
  const blocking = await settledWithin(ready, CLOSE_WITHOUT_REDIS_MS, undefined);
  blocking?.disconnect();
}
