/**
 * Removes credentials from text that may reach a log, an event or a run file: bearer tokens,
 * `key=`/`api-key:` pairs, well-known key shapes, and any value registered by the secret
 * provider (the exact keys in use).
 */
const PATTERNS: readonly RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b((?:x-)?api[-_]?key|x-goog-api-key|key|token|access_token|secret)(["']?\s*[:=]\s*["']?)[^\s"'&,;}]{6,}/gi,
  /\bsk-[A-Za-z0-9_-]{12,}/g,
  /\bsk-ant-[A-Za-z0-9_-]{12,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
];

const REDACTED = '[REDACTED]';

/**
 * The text with every credential replaced by `[REDACTED]`: the known values given (the keys
 * actually configured, so a key of an unusual shape is scrubbed too) and the patterns above.
 */
export function scrubSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const value of known) {
    if (value.length >= 4 && out.includes(value)) out = out.split(value).join(REDACTED);
  }
  for (const pattern of PATTERNS) {
    out = out.replace(pattern, (match: string, name?: string, sep?: string) => {
      if (typeof name !== 'string') return REDACTED;
      if (/^(Bearer|Basic)$/i.test(name)) return `${name} ${REDACTED}`;
      return `${name}${sep ?? '='}${REDACTED}`;
    });
  }
  return out;
}
