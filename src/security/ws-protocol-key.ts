/**
 * The API key from a browser's WebSocket. A browser cannot set headers on a WebSocket and the
 * spec refuses a key in the query string (it would land in access logs and history), so a page
 * offers the key as a subprotocol, in the `Sec-WebSocket-Protocol` request header:
 * `new WebSocket(url, [WS_PROTOCOL, WS_KEY_PROTOCOL_PREFIX + base64url(key)])`. The server
 * answers with {@link WS_PROTOCOL} only, never echoing the credential. The Kubernetes API server
 * takes bearer tokens from browsers the same way. This module has no Node imports: the console
 * imports these names.
 */

/** The subprotocol the server selects when a client offers it. */
export const WS_PROTOCOL = 'agentic.v1';

/** Prefix of the subprotocol that carries the key, base64url-encoded (UTF-8, no padding). */
export const WS_KEY_PROTOCOL_PREFIX = 'agentic.bearer.';

/** The offered subprotocols of a `Sec-WebSocket-Protocol` header value (comma-separated). */
export function offeredProtocols(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== '');
}

/** The protocol to answer with: the marker when offered, else none of them (a credential never). */
export function selectProtocol(offered: Iterable<string>): string | false {
  for (const protocol of offered) if (protocol === WS_PROTOCOL) return WS_PROTOCOL;
  return false;
}
