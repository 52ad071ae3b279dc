import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Context } from 'koa';

/**
 * The client address used for rate limiting and auth lockout.
 *
 * Without `trustProxy` it is always the socket's peer address: `X-Forwarded-For` is
 * client-controlled and would let anyone pick a fresh identity per request. With
 * `trustProxy` (AGENTIC_TRUST_PROXY=1) the runtime assumes exactly one reverse proxy in
 * front of it and takes the right-most valid `X-Forwarded-For` entry: the address that
 * proxy appended, not the left-most one a client may have forged.
 */
export function clientIp(source: Context | IncomingMessage, trustProxy: boolean): string {
  const req: IncomingMessage = 'req' in source ? source.req : source;
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const joined = Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '');
    const entries = joined.split(',');
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const candidate = normalizeIp(entries[i]?.trim() ?? '');
      if (isIP(candidate) !== 0) return candidate;
    }
  }
  return normalizeIp(req.socket.remoteAddress ?? 'unknown');
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is the same client as `1.2.3.4`. */
function normalizeIp(address: string): string {
  const lower = address.toLowerCase();
  if (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4) return lower.slice(7);
  return lower;
}
