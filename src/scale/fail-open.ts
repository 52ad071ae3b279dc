/**
 * The shared limits' answer to a Redis that is away: fail open to the in-process limiter. The
 * local limiter counts every request all along, so when Redis stops answering each instance
 * still enforces the limit on what it sees (a client spread over N instances gets up to N
 * times the budget until Redis is back), and no request waits on a dead connection.
 */
import type { Redis } from 'ioredis';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';

/** Longest a limit decision waits for Redis before the local limiter decides. */
export const SHARED_LIMIT_TIMEOUT_MS = 250;

/** Runs `shared` against Redis, or answers `local()` when Redis is away, slow or failing. */
export type FailOpen = <T>(shared: () => Promise<T>, local: () => T) => Promise<T>;

export function createFailOpen(redis: Redis, logger: Logger, what: string): FailOpen {
  let degraded = false;
  const degrade = (reason: string): void => {
    if (degraded) return;
    degraded = true;
    logger.warn(
      { err: reason },
      `Redis unavailable: ${what} enforced per instance until it is back`,
    );
  };
  return async (shared, local) => {
    if (redis.status !== 'ready') {
      degrade(`connection ${redis.status}`);
      return local();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${SHARED_LIMIT_TIMEOUT_MS} ms`)),
        SHARED_LIMIT_TIMEOUT_MS,
      );
    });
    try {
      const value = await Promise.race([shared(), timeout]);
      if (degraded) logger.info(`${what} shared through Redis again`);
      degraded = false;
      return value;
    } catch (error) {
      degrade(errorMessage(error));
      return local();
    } finally {
      clearTimeout(timer);
    }
  };
}
