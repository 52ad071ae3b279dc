import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { Config } from '../../config/index.js';
import { AuthError, RateLimitedError } from '../../errors.js';
import type { Logger } from '../../log.js';
import {
  AuthLockout,
  constantTimeEqual,
  offeredProtocols,
  queryCarriesKey,
  WS_KEY_PROTOCOL_PREFIX,
  type LockoutStore,
} from '../../security/index.js';
import { clientIp } from '../client-ip.js';
import { safeDecode } from '../safe-decode.js';

export interface AuthOptions {
  /** Injectable clock (ms) for the lockout. @default Date.now */
  now?: () => number;
  /** Receives the open-mode warning and lockout notices. */
  logger?: Logger;
  /**
   * The failure record, e.g. one shared through Redis by every instance.
   * @default an in-process AuthLockout of `config.authLockout`
   */
  lockout?: LockoutStore;
}

/** Result of {@link AuthGuard.checkUpgrade}. */
export type UpgradeCheck =
  | { ok: true }
  | {
      ok: false;
      reason: string;
      /** HTTP status for a refused upgrade: 401 (bad key) or 429 (locked out). */
      status: 401 | 429;
      /** Seconds, when `status` is 429. */
      retryAfterSeconds?: number;
    };

export interface AuthGuard {
  /** Koa middleware: API key + lockout for `/api/` routes (public paths excepted). */
  middleware: Middleware;
  /**
   * The same key and lockout rules for a WebSocket upgrade request; the key may also come as a
   * subprotocol (`security/ws-protocol-key.ts`), the one way a browser can send it.
   */
  checkUpgrade(req: IncomingMessage): Promise<UpgradeCheck>;
  /** True when AGENTIC_API_KEY is unset. */
  readonly openMode: boolean;
}

/** Exact public paths (spec, Authentication 5); GET and HEAD only; never a prefix match. */
const PUBLIC_PATHS = new Set(['/api/health', '/docs', '/openapi.json', '/redoc']);

/**
 * The API key guard (AGENTIC_API_KEY, spec Authentication). A key is accepted from
 * `Authorization: Bearer <key>` or `X-API-Key: <key>`, compared in constant time. Client
 * failures count towards the lockout (AGENTIC_AUTH_LOCKOUT_*); while locked out every
 * protected request from that client is a 429 with `Retry-After`, a success clears the count.
 * Without a key the service runs in open mode and says so loudly once, here.
 */
export function createAuth(config: Config, opts: AuthOptions = {}): AuthGuard {
  const apiKey = config.apiKey;
  // Without AGENTIC_METRICS there is no /metrics route: the path is the SPA's like any other.
  const protectMetrics = config.metrics && !config.metricsPublic;
  const lockout: LockoutStore =
    opts.lockout ??
    new AuthLockout({
      ...config.authLockout,
      ...(opts.now ? { now: opts.now } : {}),
    });
  if (apiKey === undefined) {
    opts.logger?.warn(
      'AGENTIC_API_KEY is not set: the API is running in OPEN MODE and accepts every request ' +
        'without authentication. Use this for local development only; set AGENTIC_API_KEY ' +
        'before exposing the service.',
    );
  }

  const presentedKeyMatches = (headers: IncomingMessage['headers'], upgrade = false): boolean => {
    if (apiKey === undefined) return true;
    let ok = false;
    // Only an upgrade reads the subprotocol key: a browser's WebSocket cannot send headers.
    if (upgrade) {
      for (const protocol of offeredProtocols(headers['sec-websocket-protocol'])) {
        if (!protocol.startsWith(WS_KEY_PROTOCOL_PREFIX)) continue;
        const encoded = protocol.slice(WS_KEY_PROTOCOL_PREFIX.length);
        const key = Buffer.from(encoded, 'base64url').toString('utf8');
        if (constantTimeEqual(key, apiKey)) ok = true;
      }
    }
    const authorization = headers.authorization;
    if (typeof authorization === 'string') {
      const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
      if (match?.[1] !== undefined && constantTimeEqual(match[1], apiKey)) ok = true;
    }
    const headerKey = headers['x-api-key'];
    if (typeof headerKey === 'string' && constantTimeEqual(headerKey.trim(), apiKey)) ok = true;
    return ok;
  };

  /** Throws the lockout 429 or the 401; records the outcome for the lockout. */
  const authenticate = async (
    client: string,
    headers: IncomingMessage['headers'],
    upgrade = false,
  ): Promise<void> => {
    const lockedFor = await lockout.lockedFor(client);
    if (lockedFor > 0) {
      throw new RateLimitedError('Too many failed authentication attempts', lockedFor);
    }
    if (presentedKeyMatches(headers, upgrade)) {
      await lockout.recordSuccess(client);
      return;
    }
    if ((await lockout.recordFailure(client)) > 0) {
      opts.logger?.warn({ client }, 'auth lockout started');
    }
    throw new AuthError();
  };

  const middleware: Middleware = async (ctx, next) => {
    if (apiKey === undefined || !requiresKey(ctx.method, ctx.path, protectMetrics)) {
      await next();
      return;
    }
    await authenticate(clientIp(ctx, config), ctx.req.headers);
    await next();
  };

  const checkUpgrade = async (req: IncomingMessage): Promise<UpgradeCheck> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (queryCarriesKey(url.searchParams)) {
      if (apiKey !== undefined) await lockout.recordFailure(clientIp(req, config));
      return { ok: false, reason: 'API key in the query string is not accepted', status: 401 };
    }
    if (apiKey === undefined) return { ok: true };
    try {
      await authenticate(clientIp(req, config), req.headers, true);
      return { ok: true };
    } catch (error) {
      if (error instanceof RateLimitedError) {
        return {
          ok: false,
          reason: error.message,
          status: 429,
          retryAfterSeconds: error.retryAfterSeconds,
        };
      }
      return { ok: false, reason: 'Missing or invalid API key', status: 401 };
    }
  };

  return { middleware, checkUpgrade, openMode: apiKey === undefined };
}

/**
 * Whether a request needs the key: everything under `/api` (and `/ws`, `/mcp`) except the exact
 * public paths. The path is percent-decoded, slash-collapsed and lower-cased before the
 * prefix test, so `/API/runs`, `//api/runs` or `/%61pi/runs` (which a case-insensitive
 * router may still route) cannot slip past; the public test uses the raw path, so
 * `/api/health/`, `/api/healthz` and `/api/health/ready` all need the key. `/metrics` needs
 * it too unless `protectMetrics` is false (AGENTIC_METRICS_PUBLIC=1).
 */
export function requiresKey(method: string, rawPath: string, protectMetrics = true): boolean {
  if ((method === 'GET' || method === 'HEAD') && PUBLIC_PATHS.has(rawPath)) return false;
  const path = normalizePath(rawPath);
  if (path === '/metrics' || path.startsWith('/metrics/')) return protectMetrics;
  return (
    path === '/api' ||
    path.startsWith('/api/') ||
    path === '/ws' ||
    path.startsWith('/ws/') ||
    path === '/mcp' ||
    path.startsWith('/mcp/')
  );
}

function normalizePath(rawPath: string): string {
  let path = rawPath;
  for (let i = 0; i < 3 && path.includes('%'); i += 1) {
    const decoded = safeDecode(path);
    if (decoded === undefined) break;
    path = decoded;
  }
  return path
    .replace(/[\\/]+/g, '/')
    .replace(/\/\.(?=\/|$)/g, '')
    .toLowerCase();
}
