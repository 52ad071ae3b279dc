import { runDetector, type Span } from './detector.js';
import { INJECTION_DETECTORS } from './detectors/injection.js';
import { PII_DETECTORS } from './detectors/pii.js';
import { SECRET_DETECTORS } from './detectors/secrets.js';
import { INVISIBLE, UNICODE_DETECTORS, skeleton } from './detectors/unicode.js';
import { actionFor } from './policy.js';
import { ACTIONS } from './types.js';

/** Redaction marker written in place of every redacted span. */
export const REDACTED = '[REDACTED]';

const NON_ASCII = /[\u0080-\uFFFF]/;
const HAS_INVISIBLE = new RegExp(INVISIBLE.source, 'u');
const REDACTING = [...SECRET_DETECTORS, ...PII_DETECTORS];
/** Shorter strings cannot hold any pattern except a lone unicode control character. */
const MIN_PATTERN_LENGTH = 6;

/** What one string scan produced. */
export interface StringScan {
  /** Spans that produced findings (the `detector` says which). */
  spans: Span[];
  /** The string with redactions applied; the input itself when nothing was redacted. */
  cleaned: string;
}

/**
 * Scans one decoded string. Secrets and PII are matched on the text with invisible
 * characters removed (so `AKIA\u200B…` is still a key), injections on a normalized
 * skeleton (NFKC, invisibles removed, look-alike letters mapped to Latin). Redactions are
 * written into the invisible-free text; a string with no redaction comes back unchanged.
 */
export function scanString(text: string): StringScan {
  const spans: Span[] = [];
  const nonAscii = NON_ASCII.test(text);
  if (nonAscii) for (const d of UNICODE_DETECTORS) runDetector(d, text, spans);
  if (text.length < MIN_PATTERN_LENGTH) return { spans, cleaned: text };

  const working = nonAscii && HAS_INVISIBLE.test(text) ? text.replace(INVISIBLE, '') : text;
  const redactSpans: Span[] = [];
  for (const d of REDACTING) runDetector(d, working, redactSpans);
  const kept = dropOverlaps(redactSpans);
  const injectionText = nonAscii ? skeleton(text) : text;
  const injection: Span[] = [];
  for (const d of INJECTION_DETECTORS) runDetector(d, injectionText, injection);
  spans.push(...kept, ...injection);

  const toRedact = kept.filter(
    (s) => actionFor(s.detector.category, s.detector.severity) === ACTIONS.REDACT,
  );
  if (toRedact.length === 0) return { spans, cleaned: text };
  return { spans, cleaned: applyRedactions(working, toRedact) };
}

/** Keeps the first detector's span where two overlap (detector order = specificity). */
function dropOverlaps(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  const kept: Span[] = [];
  for (const span of spans) {
    if (!kept.some((k) => span.start < k.end && k.start < span.end)) kept.push(span);
  }
  return kept;
}

function applyRedactions(text: string, spans: Span[]): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = '';
  let cursor = 0;
  for (const span of sorted) {
    if (span.start < cursor) continue;
    out += text.slice(cursor, span.start) + REDACTED;
    cursor = span.end;
  }
  return out + text.slice(cursor);
}
