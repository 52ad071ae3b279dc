/**
 * Query parameters that may carry an API key. A key is only accepted in headers (spec,
 * Authentication 8), so any of these names, in any letter case, refuses a WebSocket upgrade and
 * counts as a failed attempt. The one list for the auth guard and the WebSocket hub.
 */
export const QUERY_KEY_PARAMS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'x-api-key',
  'x_api_key',
  'authorization',
]);

/** True when a query string names any of {@link QUERY_KEY_PARAMS}, in any letter case. */
export function queryCarriesKey(params: URLSearchParams): boolean {
  for (const name of params.keys()) if (QUERY_KEY_PARAMS.has(name.toLowerCase())) return true;
  return false;
}
