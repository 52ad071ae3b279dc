import type { Middleware } from 'koa';
import type { Config } from '../../config/index.js';

const ALLOW_METHODS = 'GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS';
const ALLOW_HEADERS = 'Authorization,Content-Type,X-API-Key,X-Request-Id,Last-Event-ID';
const EXPOSE_HEADERS = [
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'X-Request-Id',
  'X-Sanitization',
].join(',');
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * True when `origin` is in AGENTIC_CORS_ORIGINS (exact match after trimming a trailing
 * slash, scheme and host compared case-insensitively); `*` in the list allows any origin.
 * Used for CORS and for the WebSocket Origin check.
 */
export function isOriginAllowed(origin: string, config: Config): boolean {
  const wanted = normalizeOrigin(origin);
  if (wanted === undefined) return false;
  for (const allowed of config.corsOrigins) {
    if (allowed === '*') return true;
    if (normalizeOrigin(allowed) === wanted) return true;
  }
  return false;
}

/**
 * An origin as `scheme://host[:port]` in lower case (default port dropped), or undefined for
 * `null`, an empty value or one that is not a URL.
 */
export function normalizeOrigin(origin: string): string | undefined {
  const trimmed = origin.trim().replace(/\/$/, '');
  if (trimmed === '' || trimmed === 'null') return undefined;
  try {
    const url = new URL(trimmed);
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * CORS, mounted before auth and rate limiting so that a preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here and never meets the key check.
 * Disallowed origins get no CORS headers at all: the browser then refuses the response.
 */
export function createCors(config: Config): Middleware {
  return async (ctx, next) => {
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    const allowed = origin !== '' && isOriginAllowed(origin, config);
    const preflight = ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method') !== '';
    if (preflight) {
      if (allowed) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS);
        ctx.set(
          'Access-Control-Allow-Headers',
          ctx.get('Access-Control-Request-Headers') || ALLOW_HEADERS,
        );
        ctx.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
        ctx.vary('Access-Control-Request-Headers');
      }
      ctx.status = 204;
      return;
    }
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    }
    await next();
  };
}
