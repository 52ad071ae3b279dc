/**
 * What a service attaches to its Redis side (startServer calls it when `REDIS_URL` is set): the
 * publisher of its runs, the history feed, and the shared rate limit and auth lockout.
 */
import type { Config } from '../config/index.js';
import type { Runtime } from '../engine/types.js';
import type { EventHub } from '../events/hub.js';
import type { Logger } from '../log.js';
import type { LockoutStore, RateWindow } from '../security/index.js';
import type { HistoryIndex } from '../store/history.js';
import { followRunRecords } from './history-feed.js';
import { attachRunPublisher } from './run-publisher.js';
import type { ScaleOut } from './scale-out.js';
import { createSharedLockout } from './shared-lockout.js';
import { createSharedRateWindow } from './shared-rate-window.js';

export interface ScaleWiringDeps {
  runtime: Pick<Runtime, 'subscribe' | 'onRecord'>;
  hub: Pick<EventHub, 'onPublish'>;
  history: Pick<HistoryIndex, 'refresh'>;
  config: Pick<Config, 'eventStreamTtlMs' | 'rateLimit' | 'authLockout'>;
  logger: Logger;
}

export interface ScaleWiring {
  /** The auth lockout shared by the instances (createAuth's `lockout`). */
  lockout: LockoutStore;
  /** The rate limit shared by the instances (createRateLimiter's `window`). */
  rateWindow: RateWindow;
  /** Stops publishing and following (before `scale.close()`). */
  stop(): void;
}

export function wireScaleOut(scale: ScaleOut, deps: ScaleWiringDeps): ScaleWiring {
  const { config, logger } = deps;
  const detachPublisher = attachRunPublisher(deps.runtime, {
    redis: scale.redis,
    keys: scale.keys,
    streamTtlMs: config.eventStreamTtlMs,
    instanceId: scale.instanceId,
    logger,
    sender: scale.sender,
    extraEvents: (listener) => deps.hub.onPublish(listener),
  });
  const stopHistoryFeed = followRunRecords({
    reader: scale.reader,
    keys: scale.keys,
    instanceId: scale.instanceId,
    history: deps.history,
    logger,
    fromId: scale.recordsFrom,
    onIndexed: (filename) => scale.indexed(filename),
  });
  return {
    lockout: createSharedLockout({
      redis: scale.redis,
      keys: scale.keys,
      settings: config.authLockout,
      logger,
    }),
    rateWindow: createSharedRateWindow({
      redis: scale.redis,
      keys: scale.keys,
      limit: config.rateLimit.limit,
      windowMs: config.rateLimit.windowMs,
      instanceId: scale.instanceId,
      logger,
    }),
    stop() {
      stopHistoryFeed();
      detachPublisher();
    },
  };
}
