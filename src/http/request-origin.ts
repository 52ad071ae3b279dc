import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Config } from '../config/index.js';
import { normalizeOrigin } from './middleware/cors.js';

/** What {@link isSameOrigin} needs from the configuration (pass the `Config`). */
export type RequestOriginOptions = Pick<Config, 'trustProxy'>;

/**
 * The origin (`scheme://host[:port]`, lower case, default port dropped) a request was addressed
 * to, as Koa's `ctx.origin` reads it: `https` on a TLS socket, else `http`; the `Host` header.
 * With `trustProxy` (AGENTIC_TRUST_PROXY=1), where Koa also trusts them, the first
 * `X-Forwarded-Proto` and `X-Forwarded-Host` values win: the proxy's public address is the one
 * the browser addressed. Undefined when the request names no usable host.
 */
export function requestOrigin(
  req: IncomingMessage,
  options: RequestOriginOptions,
): string | undefined {
  const forwarded = (name: string): string | undefined => {
    if (!options.trustProxy) return undefined;
    const value = req.headers[name];
    const first = (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
    return first === '' ? undefined : first;
  };
  const scheme = (req.socket as Partial<TLSSocket>).encrypted
    ? 'https'
    : (forwarded('x-forwarded-proto') ?? 'http');
  const host = forwarded('x-forwarded-host') ?? req.headers.host;
  if (host === undefined || host === '' || /[/?#@\\\s]/.test(host)) return undefined;
  return normalizeOrigin(`${scheme}://${host}`);
}

/**
 * True when `origin` (a browser's `Origin` header) is the origin the request was addressed to:
 * a page the service served itself, never a cross-origin client, whatever AGENTIC_CORS_ORIGINS
 * says. A client that writes its own `Host` can pass this, but such a client can write any
 * allowed `Origin` as well: the check stops browsers, which set `Origin` themselves and never
 * let a page set `Host` or `X-Forwarded-*` on a WebSocket.
 */
export function isSameOrigin(
  origin: string,
  req: IncomingMessage,
  options: RequestOriginOptions,
): boolean {
  const own = requestOrigin(req, options);
  return own !== undefined && normalizeOrigin(origin) === own;
}
