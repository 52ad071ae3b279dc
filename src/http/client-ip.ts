import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Context } from 'koa';
import type { Config } from '../config/index.js';

/** What {@link clientIp} needs from the configuration (pass the `Config`). */
export type ClientIpOptions = Pick<Config, 'trustProxy' | 'trustedProxyHops'>;

/**
 * The client address used for rate limiting and auth lockout (HTTP requests and WebSocket
 * upgrades alike).
 *
 * Without `trustProxy` it is always the socket's peer address: `X-Forwarded-For` is
 * client-controlled and would let anyone pick a fresh identity per request.
 *
 * With `trustProxy` (AGENTIC_TRUST_PROXY=1) there are `trustedProxyHops` proxies in front of
 * the service (AGENTIC_TRUSTED_PROXY_HOPS), each appending the address it received the request
 * from; the client is the entry exactly that many places from the right, the one the outermost
 * trusted proxy wrote. Everything left of it is whatever the client sent. When that entry is
 * not an address (`unknown`, garbage, an empty slot) or the header has fewer entries (the
 * request did not pass every proxy), the socket address is used: never an earlier entry, which
 * is the client's own choice and would let it dodge the rate limit or lock out a victim.
 */
export function clientIp(source: Context | IncomingMessage, options: ClientIpOptions): string {
  const req: IncomingMessage = 'req' in source ? source.req : source;
  if (options.trustProxy) {
    const forwarded = forwardedClient(req.headers['x-forwarded-for'], options.trustedProxyHops);
    if (forwarded !== undefined) return forwarded;
  }
  return normalizeIp(req.socket.remoteAddress ?? 'unknown');
}

/**
 * The address `hops` entries from the right of `X-Forwarded-For` (several header lines count
 * as one list, in order), or undefined when there are fewer entries or that one is malformed.
 */
export function forwardedClient(
  header: string | string[] | undefined,
  hops: number,
): string | undefined {
  if (header === undefined || !(hops >= 1)) return undefined;
  const entries = (Array.isArray(header) ? header.join(',') : header).split(',');
  const entry = entries[entries.length - hops];
  return entry === undefined ? undefined : parseForwardedAddress(entry);
}

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * One `X-Forwarded-For` entry as an address: a bare IPv4 or IPv6 address, `ipv4:port` or
 * `[ipv6]` / `[ipv6]:port` (proxies that append the peer's port write these; the port is
 * unambiguous there and dropped). Anything else, including `unknown` and RFC 7239 obfuscated
 * identifiers, is undefined. A bare IPv6 address is never split at a colon: `::1:80` is an
 * address, not `::1` port 80.
 */
export function parseForwardedAddress(entry: string): string | undefined {
  const text = entry.trim();
  if (isIP(text) !== 0) return normalizeIp(text);
  const v4 = IPV4_WITH_PORT.exec(text)?.[1];
  if (v4 !== undefined && isIP(v4) === 4) return v4;
  const v6 = BRACKETED_IPV6.exec(text)?.[1];
  if (v6 !== undefined && isIP(v6) === 6) return normalizeIp(v6);
  return undefined;
}

/**
 * One spelling per address, so a limit keyed on it cannot be split: IPv6 lower-cased and
 * compressed (`2001:DB8:0::1` is `2001:db8::1`), IPv4-mapped IPv6 (`::ffff:1.2.3.4`, also
 * written `::ffff:102:304`) as the IPv4 address it is. Addresses with a zone (`fe80::1%eth0`)
 * are only lower-cased.
 */
function normalizeIp(address: string): string {
  const lower = address.toLowerCase();
  if (isIP(lower) !== 6 || lower.includes('%')) return lower;
  const compressed = new URL(`http://[${lower}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped?.[1] === undefined || mapped[2] === undefined) return compressed;
  const high = parseInt(mapped[1], 16);
  const low = parseInt(mapped[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}
