/**
 * LLM circuit states shared by the deployment's instances: when a model's circuit opens (or
 * closes again) on one instance, the others adopt it, so a failing provider is skipped
 * everywhere after `threshold` failures in total rather than per instance, and its cool-down
 * ends everywhere at once. Transitions go out on a pub/sub channel (`<prefix>:breakers:changes`)
 * and into a hash (`<prefix>:breakers`) that an instance reads when it starts or reconnects,
 * so it also learns what happened while it was away.
 *
 * Redis away: publishing fails quietly (logged once) and each instance's breakers go on alone,
 * as without Redis; the hash is re-read when the subscriber connection is back.
 */
import type { Redis } from 'ioredis';
import { errorMessage } from '../errors.js';
import type { BreakerTransition } from '../llm/circuit-breaker.js';
import type { BreakerSharing } from '../llm/router.js';
import type { Logger } from '../log.js';
import type { ScaleKeys } from './keys.js';
import { openRedis } from './redis-connection.js';

/** How long the hash of transitions outlives its last change (longer than any cool-down). */
const BREAKERS_TTL_MS = 24 * 60 * 60 * 1000;

export interface SharedBreakersOptions {
  url: string;
  /** The command connection (publish, hash). */
  redis: Redis;
  keys: ScaleKeys;
  instanceId: string;
  logger: Logger;
}

export interface SharedBreakers extends BreakerSharing {
  /** Settles once other instances' transitions are followed (tests; start-up does not wait). */
  readonly subscribed: Promise<void>;
  close(): void;
}

interface Message {
  i: string;
  m: string;
  t: BreakerTransition;
}

function parseTransition(value: unknown): BreakerTransition | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const t = value as Record<string, unknown>;
  if (t.state === 'closed') return { state: 'closed' };
  if (t.state === 'open' && typeof t.openedAt === 'number') {
    return { state: 'open', openedAt: t.openedAt };
  }
  return undefined;
}

export function createSharedBreakers(options: SharedBreakersOptions): SharedBreakers {
  const { redis, keys, logger, instanceId } = options;
  const subscriber = openRedis({ url: options.url, logger, name: 'breakers' });
  const appliers = new Set<(model: string, transition: BreakerTransition) => void>();
  let failing = false;

  const apply = (model: string, transition: BreakerTransition): void => {
    for (const applier of appliers) applier(model, transition);
  };
  const loadAll = async (): Promise<void> => {
    const all = await redis.hgetall(keys.breakers);
    for (const [model, json] of Object.entries(all)) {
      try {
        const transition = parseTransition(JSON.parse(json));
        if (transition !== undefined) apply(model, transition);
      } catch {
        logger.debug({ model }, 'unreadable shared circuit state ignored');
      }
    }
  };
  const reload = (): void => {
    loadAll().catch((error: unknown) => {
      logger.debug({ err: errorMessage(error) }, 'shared circuit states not read');
    });
  };

  subscriber.on('message', (_channel: string, text: string) => {
    try {
      const message = JSON.parse(text) as Message;
      const transition = parseTransition(message.t);
      if (message.i === instanceId || typeof message.m !== 'string' || transition === undefined)
        return;
      apply(message.m, transition);
    } catch {
      logger.debug('unreadable circuit transition ignored');
    }
  });
  // Subscribed again by ioredis after a reconnect; what changed meanwhile is in the hash.
  subscriber.on('ready', reload);
  // Read again once subscribed: a transition between the first read and the subscription would
  // be in neither.
  const subscribed = subscriber.subscribe(keys.breakerChanges).then(
    () => reload(),
    (error: unknown) => {
      logger.warn(
        { err: errorMessage(error) },
        'circuit transitions of other instances not followed',
      );
    },
  );

  return {
    subscribed,
    publish(model, transition) {
      const json = JSON.stringify(transition);
      redis
        .pipeline()
        .hset(keys.breakers, model, json)
        .pexpire(keys.breakers, BREAKERS_TTL_MS)
        .publish(keys.breakerChanges, JSON.stringify({ i: instanceId, m: model, t: transition }))
        .exec()
        .then(
          () => {
            failing = false;
          },
          (error: unknown) => {
            if (failing) return;
            failing = true;
            logger.warn(
              { model, err: errorMessage(error) },
              'Redis unavailable: circuit transition kept to this instance',
            );
          },
        );
    },
    subscribe(applier) {
      appliers.add(applier);
      reload();
      return () => {
        appliers.delete(applier);
      };
    },
    close() {
      appliers.clear();
      subscriber.disconnect();
    },
  };
}
