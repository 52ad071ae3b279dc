/**
 * The sliding-window rate limit shared by every instance: one sorted set per client
 * (`<prefix>:ratelimit:global:<client>`, members scored by request time), trimmed, counted and
 * added to by one Lua script, so the check-and-count is atomic across instances. Exact like the
 * in-process limiter: a request is allowed iff fewer than `limit` were allowed in the last
 * `windowMs`. Memory: at most `limit` members per client active in the last window.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { SlidingWindowLimiter, type RateDecision, type RateWindow } from '../security/index.js';
import { createFailOpen } from './fail-open.js';
import type { ScaleKeys } from './keys.js';

const HIT_SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  count = count + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or ARGV[1]
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2] or ARGV[1]
return {allowed, count, oldest, newest}
`;

type HitReply = [allowed: number, count: number, oldest: string, newest: string];
type WithHit = Redis & {
  agenticRateHit(
    key: string,
    now: number,
    window: number,
    limit: number,
    member: string,
  ): Promise<HitReply>;
};

export interface SharedRateWindowOptions {
  redis: Redis;
  keys: ScaleKeys;
  limit: number;
  windowMs: number;
  /** Part of each member, so two instances' requests of one millisecond stay distinct. */
  instanceId: string;
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
}

export function createSharedRateWindow(options: SharedRateWindowOptions): RateWindow {
  const { limit, windowMs, keys } = options;
  const now = options.now ?? Date.now;
  const local = new SlidingWindowLimiter({ limit, windowMs, now });
  const redis = options.redis as WithHit;
  if (typeof redis.agenticRateHit !== 'function') {
    redis.defineCommand('agenticRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  }
  const failOpen = createFailOpen(options.redis, options.logger, 'the rate limit');
  let sequence = 0;

  const shared = async (key: string, at: number): Promise<RateDecision> => {
    sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
    const member = `${at}:${options.instanceId}:${sequence}`;
    const [allowed, count, oldestRaw, newestRaw] = await redis.agenticRateHit(
      keys.rateLimit('global', key),
      at,
      windowMs,
      limit,
      member,
    );
    const oldest = Number(oldestRaw);
    const newest = Number(newestRaw);
    if (allowed === 1) {
      return {
        allowed: true,
        limit,
        remaining: Math.max(0, limit - count),
        retryAfterMs: 0,
        resetMs: Math.max(0, oldest + windowMs - at),
      };
    }
    return {
      allowed: false,
      limit,
      remaining: 0,
      retryAfterMs: Math.max(1, oldest + windowMs - at),
      resetMs: Math.max(0, newest + windowMs - at),
    };
  };

  return {
    limit,
    windowMs,
    hit(key) {
      const at = now();
      // Counted locally too, so the fallback has this instance's history when Redis goes.
      const fallback = local.hit(key);
      return failOpen(
        () => shared(key, at),
        () => fallback,
      );
    },
  };
}
