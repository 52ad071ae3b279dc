/**
 * `decodeURIComponent` that answers `undefined` for malformed percent-encoding (`%E0%A4%A`,
 * a lone `%`) instead of throwing a URIError, so a bad path segment becomes the caller's 404,
 * close code or refusal rather than a 500. The one decoder for request paths.
 */
export function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
