import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { Config } from '../../config/index.js';
import { RateLimitedError } from '../../errors.js';
import { SlidingWindowLimiter, type RateWindow } from '../../security/index.js';
import { clientIp } from '../client-ip.js';

export interface RateLimitOptions {
  /** Injectable clock (ms). @default Date.now */
  now?: () => number;
  /**
   * The budget itself, e.g. one shared through Redis by every instance.
   * @default an in-process SlidingWindowLimiter of `config.rateLimit`
   */
  window?: RateWindow;
}

/** Result of {@link RateLimiter.checkUpgrade}. */
export type UpgradeRateCheck =
  | { ok: true }
  | {
      ok: false;
      /** Whole seconds until one more request would be allowed (at least 1). */
      retryAfterSeconds: number;
      /** The `RateLimit-*` headers of the refusal. */
      headers: Record<string, string>;
    };

/** One per-client budget shared by HTTP requests and WebSocket upgrades. */
export interface RateLimiter {
  /** Koa middleware: counts the request; a refusal throws the 429. */
  middleware: Middleware;
  /** Counts a WebSocket upgrade request against the same budget. */
  checkUpgrade(req: IncomingMessage): Promise<UpgradeRateCheck>;
}

/**
 * Global per-client sliding-window limit (AGENTIC_RATE_LIMIT_DEFAULT, spec Limits). Every
 * request counts except the liveness probe `GET|HEAD /api/health` (exact path), so an
 * orchestrator's probe never starves a client nor gets the pod restarted for being
 * throttled. WebSocket upgrades count too ({@link RateLimiter.checkUpgrade}): a client cannot
 * open sockets faster than it may send requests. Every counted response carries `RateLimit-*`
 * headers; a refusal is a 429 with `Retry-After` (seconds, rounded up).
 */
export function createRateLimiter(config: Config, opts: RateLimitOptions = {}): RateLimiter {
  const limiter =
    opts.window ??
    new SlidingWindowLimiter({
      limit: config.rateLimit.limit,
      windowMs: config.rateLimit.windowMs,
      ...(opts.now ? { now: opts.now } : {}),
    });
  const policy = `${config.rateLimit.limit};w=${Math.ceil(config.rateLimit.windowMs / 1000)}`;
  const hit = async (client: string) => {
    const decision = await limiter.hit(client);
    const headers = {
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(Math.ceil(decision.resetMs / 1000)),
      'RateLimit-Policy': policy,
    };
    return { decision, headers };
  };

  const middleware: Middleware = async (ctx, next) => {
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path === '/api/health') {
      await next();
      return;
    }
    const { decision, headers } = await hit(clientIp(ctx, config));
    if (!decision.allowed) {
      throw new RateLimitedError('Rate limit exceeded', decision.retryAfterMs / 1000, headers);
    }
    ctx.set(headers);
    await next();
  };

  const checkUpgrade = async (req: IncomingMessage): Promise<UpgradeRateCheck> => {
    const { decision, headers } = await hit(clientIp(req, config));
    if (decision.allowed) return { ok: true };
    return {
      ok: false,
      retryAfterSeconds: Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
      headers,
    };
  };

  return { middleware, checkUpgrade };
}

/** The rate-limit middleware alone (a limiter of its own). */
export function createRateLimit(config: Config, opts: RateLimitOptions = {}): Middleware {
  return createRateLimiter(config, opts).middleware;
}
