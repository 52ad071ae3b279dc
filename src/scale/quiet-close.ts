/**
 * Closing Redis-backed parts while Redis may be away. A command sent to a connection that is
 * down waits in its offline queue until Redis returns, so a shutdown must not send one then:
 * unsubscribing is skipped, QUIT becomes a plain disconnect, and closes that need Redis (BullMQ's)
 * are given a bounded wait.
 */
import type { Redis } from 'ioredis';

/** How long a close that needs Redis is waited for while Redis is away. */
export const CLOSE_WITHOUT_REDIS_MS = 1_000;

/** Unsubscribes while connected; a subscription of a dropped connection ends with it anyway. */
export async function unsubscribeQuietly(redis: Redis, channel: string): Promise<void> {
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
 */
export async function closeWithin(redis: Redis, closing: Promise<unknown>): Promise<void> {
  const settled = closing.then(
    () => undefined,
    () => undefined,
  );
  if (redis.status === 'ready') return settled;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    settled,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WITHOUT_REDIS_MS);
    }),
  ]);
  clearTimeout(timer);
}
