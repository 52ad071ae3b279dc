import type { Middleware } from 'koa';
import type { Config } from '../../config/index.js';
import { RateLimitedError } from '../../errors.js';
import { SlidingWindowLimiter } from '../../security/index.js';
import { clientIp } from '../client-ip.js';

export interface RateLimitOptions {
  /** Injectable clock (ms). @default Date.now */
  now?: () => number;
}

/**
 * Global per-client sliding-window limit (AGENTIC_RATE_LIMIT_DEFAULT, spec Limits). Every
 * request counts except the liveness probe `GET|HEAD /api/health` (exact path), so an
 * orchestrator's probe never starves a client nor gets the pod restarted for being
 * throttled. Every counted response carries `RateLimit-*` headers; a refusal is a 429 with
 * `Retry-After` (seconds, rounded up).
 */
export function createRateLimit(config: Config, opts: RateLimitOptions = {}): Middleware {
  const limiter = new SlidingWindowLimiter({
    limit: config.rateLimit.limit,
    windowMs: config.rateLimit.windowMs,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const policy = `${config.rateLimit.limit};w=${Math.ceil(config.rateLimit.windowMs / 1000)}`;
  return async (ctx, next) => {
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path === '/api/health') {
      await next();
      return;
    }
    const decision = limiter.hit(clientIp(ctx, config));
    const headers = {
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(Math.ceil(decision.resetMs / 1000)),
      'RateLimit-Policy': policy,
    };
    if (!decision.allowed) {
      throw new RateLimitedError('Rate limit exceeded', decision.retryAfterMs / 1000, headers);
    }
    ctx.set(headers);
    await next();
  };
}
