import type { Detector } from './detector.js';
import { INJECTION_DETECTORS } from './detectors/injection.js';
import { PII_DETECTORS } from './detectors/pii.js';
import { SECRET_DETECTORS } from './detectors/secrets.js';
import { INVISIBLE, UNICODE_DETECTORS, needsSkeleton, skeleton } from './detectors/unicode.js';
import { actionFor } from './policy.js';
import { ACTIONS } from './types.js';

/** Redaction marker written in place of every redacted span. */
export const REDACTED = '[REDACTED]';

/** A match inside one of the scanned strings. */
export interface Span {
  /** Index of the string in the scanned batch. */
  index: number;
  start: number;
  end: number;
  detector: Detector;
}

const NON_ASCII = /[\u0080-\uFFFF]/;
const HAS_INVISIBLE = new RegExp(INVISIBLE.source, 'u');
const HAS_SPACE = /\s/;
/** Shorter strings cannot hold any pattern except a lone unicode control character. */
const MIN_PATTERN_LENGTH = 6;
/**
 * Short ASCII identifiers (most object keys) cannot hold any pattern either: every secret
 * shape is longer or needs punctuation, PII needs `@`, `+`, separators or 13+ digits after
 * a letter, injections need spaces or brackets.
 */
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,15}$/;

/**
 * Gates: one cheap test per string and detector group; a group's detectors only run on a
 * string its gate accepts. Each gate is a superset of its detectors' anchors (the corpus
 * tests prove every must-catch case passes its gate).
 */
const SECRET_SHAPE_GATE =
  /AKIA|ASIA|ABIA|ACCA|gh[oprsu]_|github_pat_|sk-|[sr]k_(?:live|test)|whsec_|AIza|GOCSPX|xox[abposr]-|hooks\.slack|eyJ|PRIVATE KEY|PuTTY|:\/\//;
const SECRET_WORD_GATE = /pass|pwd|secret|token|key|credential|bearer/i;
const PII_GATE = /@|\d[\d .()/-]{5}|:[0-9A-Fa-f]{0,4}:/;
const INJECTION_GATE =
  /\b(?:ignore|disregard|forget|override|bypass|abandon|drop|discard|prompt|instructions?|above|verbatim|before\s{1,4}this|system\s{1,4}message|you\s{1,4}are|from\s{1,4}now|pretend|imagine|act\s{1,4}as|dan|anything\s{1,4}now|developer\s{1,4}mode|jailbreak|god\s?mode|ethical|moral|safety|content\s{1,4}(?:guidelines|restrictions|constraints|filters?|limits|guardrails))|<\||\[\/?inst\]|<<\/?sys>>|_of_turn>/i;

/** What scanning a batch of strings produced. */
export interface BatchScan {
  /** Every span that produced a finding. */
  spans: Span[];
  /** Per string: the cleaned text, or undefined when it is unchanged. */
  cleaned: (string | undefined)[];
}

/**
 * Scans a batch of decoded strings. Per string, each detector group (secrets, PII,
 * injection, unicode) runs only when its gate accepts the string, which keeps the cost for
 * ordinary text to a few quick tests.
 *
 * Secrets and PII are matched on the text with invisible characters removed (so
 * `AKIA\u200B…` is still a key), injections on a normalized skeleton (NFKC, invisibles
 * removed, look-alike letters mapped to Latin), unicode anomalies on the original text.
 * Redactions are written into the invisible-free text; unchanged strings stay undefined in
 * `cleaned`.
 */
export function scanBatch(texts: readonly string[]): BatchScan {
  const spans: Span[] = [];
  // Sparse: only strings that changed get an entry.
  const cleaned: (string | undefined)[] = [];
  // Reused per string; only touched when a detector matched.
  const local: Span[] = [];
  for (let index = 0; index < texts.length; index += 1) {
    const text = texts[index] as string;
    const nonAscii = NON_ASCII.test(text);
    if (nonAscii) for (const d of UNICODE_DETECTORS) run(d, text, index, spans);
    if (text.length < MIN_PATTERN_LENGTH || PLAIN_IDENTIFIER.test(text)) continue;
    const working = nonAscii && HAS_INVISIBLE.test(text) ? text.replace(INVISIBLE, '') : text;
    const secrets = SECRET_SHAPE_GATE.test(working) || SECRET_WORD_GATE.test(working);
    const pii = PII_GATE.test(working);
    if (secrets) for (const d of SECRET_DETECTORS) run(d, working, index, local);
    if (pii) for (const d of PII_DETECTORS) run(d, working, index, local);
    if (local.length > 0) {
      const kept = dropOverlaps(local);
      local.length = 0;
      spans.push(...kept);
      const redact = kept.filter(
        (span) => actionFor(span.detector.category, span.detector.severity) === ACTIONS.REDACT,
      );
      if (redact.length > 0) cleaned[index] = applyRedactions(working, redact);
    }
    const skeletal = nonAscii && needsSkeleton(text);
    const injectionText = skeletal ? skeleton(text) : text;
    // Every injection phrase spans words; a single token can only carry a role delimiter.
    const phrases = HAS_SPACE.test(injectionText) || /[<[]/.test(injectionText);
    if (phrases && INJECTION_GATE.test(injectionText)) {
      for (const d of INJECTION_DETECTORS) run(d, injectionText, index, spans);
    }
  }
  return { spans, cleaned };
}

function run(d: Detector, text: string, index: number, out: Span[]): void {
  if (d.prefilter && !d.prefilter(text)) return;
  const pattern = d.pattern;
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    if (match[0].length === 0) {
      pattern.lastIndex += 1;
      continue;
    }
    if (d.refine) {
      const token = d.refine(match, text, 0, text.length);
      pattern.lastIndex = Math.max(pattern.lastIndex, token.to);
      if (token.hit) out.push({ index, start: token.from, end: token.to, detector: d });
      continue;
    }
    if (d.validate && !d.validate(match, text, 0)) continue;
    const range = d.group === undefined ? undefined : match.indices?.[d.group];
    out.push({
      index,
      start: range ? range[0] : match.index,
      end: range ? range[1] : match.index + match[0].length,
      detector: d,
    });
  }
}

/** Keeps the first detector's span where two overlap (detector order = specificity). */
function dropOverlaps(spans: Span[]): Span[] {
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
