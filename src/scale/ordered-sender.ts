/**
 * Sends the publisher's commands to Redis in order, one pipeline at a time, and keeps them while
 * Redis is away: a run's events reach its stream in `seq` order, without a gap, once Redis is
 * back (bounded: past {@link MAX_BACKLOG} commands the oldest are dropped, and logged).
 *
 * One pipeline in flight: commands arriving meanwhile wait and go out together in the next one
 * (a burst of events costs one round trip, not one each). A pipeline lost with its connection
 * is sent again; the commands Redis had already run are then appended twice, which readers
 * drop (they keep only events above the last `seq` they have).
 */
import type { ChainableCommander, Redis } from 'ioredis';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';

/** Commands kept while Redis is away (about 20 000 events: tens of MB at most). */
export const MAX_BACKLOG = 20_000;
/** Commands per pipeline. */
const MAX_BATCH = 1_000;

/** Adds one command (or a few that belong together) to a pipeline. */
export type QueuedCommand = (pipeline: ChainableCommander) => void;

export interface OrderedSender {
  send(command: QueuedCommand): void;
  /** Commands waiting (tests, health). */
  readonly backlog: number;
  /** Settles when nothing waits or is in flight (tests; resolves at once when idle). */
  drained(): Promise<void>;
  /** Drops what waits; nothing more is sent. */
  close(): void;
}

export function createOrderedSender(redis: Redis, logger: Logger): OrderedSender {
  const queue: QueuedCommand[] = [];
  let inFlight = false;
  let waitingForRedis = false;
  let outage = false;
  let dropped = 0;
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  const idle = (): void => {
    if (inFlight || queue.length > 0) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  };
  const noteOutage = (reason: string): void => {
    if (outage) return;
    outage = true;
    logger.warn(
      { err: reason },
      'Redis unavailable: run events and record notifications are kept until it is back',
    );
  };
  const waitForRedis = (): void => {
    if (waitingForRedis) return;
    waitingForRedis = true;
    redis.once('ready', () => {
      waitingForRedis = false;
      flush();
    });
  };

  const flush = (): void => {
    if (closed || inFlight || queue.length === 0) return idle();
    if (redis.status !== 'ready') {
      noteOutage(`connection ${redis.status}`);
      return waitForRedis();
    }
    const batch = queue.splice(0, MAX_BATCH);
    const pipeline = redis.pipeline();
    for (const command of batch) command(pipeline);
    inFlight = true;
    const requeue = (reason: string): void => {
      queue.unshift(...batch);
      noteOutage(reason);
      trim();
      waitForRedis();
    };
    pipeline.exec().then(
      (results) => {
        inFlight = false;
        const failure = results?.find(([error]) => error !== null)?.[0];
        if (failure != null && redis.status !== 'ready') {
          requeue(errorMessage(failure));
          return;
        }
        // A command Redis refused (not a lost connection) would fail again: logged, not resent.
        if (failure != null) logger.warn({ err: errorMessage(failure) }, 'Redis refused a command');
        if (outage) {
          outage = false;
          logger.info({ dropped }, 'Redis back: kept run events and notifications sent');
          dropped = 0;
        }
        flush();
      },
      (error: unknown) => {
        inFlight = false;
        requeue(errorMessage(error));
      },
    );
  };

  const trim = (): void => {
    const excess = queue.length - MAX_BACKLOG;
    if (excess <= 0) return;
    queue.splice(0, excess);
    dropped += excess;
  };

  return {
    send(command) {
      if (closed) return;
      queue.push(command);
      trim();
      flush();
    },
    get backlog() {
      return queue.length;
    },
    drained() {
      if (!inFlight && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    close() {
      closed = true;
      queue.length = 0;
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    },
  };
}
