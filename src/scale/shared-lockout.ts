/**
 * The auth lockout shared by every instance: one hash per client
 * (`<prefix>:lockout:<client>`: failures `f`, first failure `s`, locked until `u`, all ms),
 * updated by one Lua script with the in-process lockout's rules, expiring with the window (or
 * the lockout). Failures are counted locally too, for the fail-open fallback.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { AuthLockout, type LockoutStore } from '../security/index.js';
import { createFailOpen } from './fail-open.js';
import type { ScaleKeys } from './keys.js';

const FAILURE_SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local duration = tonumber(ARGV[4])
local state = redis.call('HMGET', key, 'f', 's', 'u')
local failures = tonumber(state[1]) or 0
local first = tonumber(state[2]) or now
local lockedUntil = tonumber(state[3]) or 0
if failures == 0 or now - first > window or lockedUntil > 0 then
  failures = 0
  first = now
end
failures = failures + 1
if failures >= threshold then
  redis.call('HSET', key, 'f', failures, 's', ARGV[1], 'u', string.format('%d', now + duration))
  redis.call('PEXPIRE', key, duration)
  return duration
end
redis.call('HSET', key, 'f', failures, 's', string.format('%d', first), 'u', 0)
redis.call('PEXPIRE', key, window)
return 0
`;

type WithFailure = Redis & {
  agenticLockoutFailure(
    key: string,
    now: number,
    window: number,
    threshold: number,
    duration: number,
  ): Promise<number>;
};

export interface SharedLockoutOptions {
  redis: Redis;
  keys: ScaleKeys;
  settings: Config['authLockout'];
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
}

export function createSharedLockout(options: SharedLockoutOptions): LockoutStore {
  const { keys, settings } = options;
  const now = options.now ?? Date.now;
  const local = new AuthLockout({ ...settings, now });
  const redis = options.redis as WithFailure;
  if (typeof redis.agenticLockoutFailure !== 'function') {
    redis.defineCommand('agenticLockoutFailure', { numberOfKeys: 1, lua: FAILURE_SCRIPT });
  }
  const failOpen = createFailOpen(options.redis, options.logger, 'the auth lockout');
  const windowMs = settings.windowSeconds * 1000;
  const durationMs = settings.durationSeconds * 1000;

  return {
    lockedFor(client) {
      return failOpen(
        async () => {
          const until = Number((await redis.hget(keys.lockout(client), 'u')) ?? 0);
          const left = until - now();
          return left > 0 ? left / 1000 : 0;
        },
        () => local.lockedFor(client),
      );
    },
    recordFailure(client) {
      const locally = local.recordFailure(client);
      return failOpen(
        async () => {
          const ms = await redis.agenticLockoutFailure(
            keys.lockout(client),
            now(),
            windowMs,
            settings.threshold,
            durationMs,
          );
          return ms / 1000;
        },
        () => locally,
      );
    },
    async recordSuccess(client) {
      local.recordSuccess(client);
      await failOpen(
        async () => {
          await redis.del(keys.lockout(client));
        },
        () => undefined,
      );
    },
  };
}
