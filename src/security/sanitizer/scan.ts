import type { Detector } from './detector.js';
import { GAP, INJECTION_DETECTORS } from './detectors/injection.js';
import { PII_DETECTORS } from './detectors/pii.js';
import { SECRET_DETECTORS, WORD_ANCHORED_SECRETS } from './detectors/secrets.js';
import { MIXED_SCRIPT, UNICODE_DETECTORS, UNICODE_SPECIAL } from './detectors/unicode.js';
import { fold, originalRange, type Folded } from './fold.js';
import { actionFor } from './policy.js';
import { unconfuse } from './skeleton.js';
import { ACTIONS } from './types.js';

/** Redaction marker written in place of every redacted span. */
export const REDACTED = '[REDACTED]';

/**
 * A match inside one of the scanned strings: for secrets and PII, the original characters
 * (mapped back from the fold); for injections, offsets in the skeleton.
 */
export interface Span {
  /** Index of the string in the scanned batch. */
  index: number;
  start: number;
  end: number;
  detector: Detector;
}

/**
 * Gates: a detector group (key-shape secrets, key-word secrets, PII, injection) only runs on
 * a string its gate regex accepts. Each gate is a superset of its detectors' anchors (the
 * corpus tests and the differential test prove every must-catch case passes its gate).
 */
const SECRET_SHAPE_GATE =
  /AKIA|ASIA|ABIA|ACCA|gh[oprsu]_|github_pat_|sk-|[sr]k_(?:live|test)|whsec_|AIza|GOCSPX|xox[abposr]-|hooks\.slack|eyJ|PRIVATE KEY|PuTTY|:\/\//g;
const SECRET_WORD_GATE = /pass|pwd|secret|token|key|credential|bearer/gi;
const PII_GATE = /@|\d[\d .()/-]{5}|:[0-9A-Fa-f]{0,4}:/g;
/** Every injection phrase spans words; a single token can only carry a role delimiter. */
const PHRASE_GATE = /[\s<[]/g;
/**
 * What the instruction-override detectors cannot match without: the verb followed, across
 * at most the filler words they allow, by the adjective they need ("ignore all of the
 * previous", "disregard everything"), so "ignore formatting nits" passes no gate.
 */
const OVERRIDE_VERB = String.raw`(?:ignore|disregard|forget|override|bypass|abandon|drop|discard)${GAP}\s{1,4}(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|safety|ethical|content|developer)|(?:ignore|disregard|forget)\s{1,4}(?:everything|all)`;

/**
 * The jailbreak anchors that start with punctuation or a line break, kept out of the
 * injection gate: as alternatives there they cost it 5-15% on the bench bodies (its word
 * alternatives lose their quick first-character rejection); here, one regex whose every
 * branch starts with a rare character costs about one linear scan (~1 ns per character).
 * - fake role tags: `<system>`, `[SYSTEM]`, `### System`, and closing user tags (`</user>`)
 *   that fake the end of the user's turn;
 * - at a line start (in the joined batch, a string starts after the separator): the bare
 *   `system:` label followed by the first word of a strong cue that no injection-gate
 *   alternative covers (the others, `you are now`, `developer mode`, `from now on`, ... are
 *   gated there), so YAML such as `system_prompt: "You are a reviewer"` passes no gate;
 *   "end of user input" lines; and "new instructions" headers;
 * - a header after the end of a sentence ("Thanks. New instructions: ...").
 */
const TAG = String.raw`[<[#]\s{0,4}(?:system|developer|sys)|<\/\s{0,2}(?:user|human|usr|customer|client|input|query|prompt)`;
const AT_LINE_START = String.raw`[ \t>*_"'“‘#=[(-]{0,14}(?:[*_]{0,2}(?:system|developer|sys)(?:[\s_-]{1,2}\w{1,12})?[*_]{0,2}[ \t]{0,2}:[\s*_>"'“”‘’-]{0,12}(?:ignore|disregard|forget|override|bypass|your|henceforth|reveal|print|output|repeat|disclose|leak|do|never)|(?:end|close)\s{1,4}(?:of\s{1,4})?(?:the\s{1,4})?(?:(?:user|human|customer|client)\s{1,4})?(?:input|message|turn|query|prompt|request)|(?:(?:begin|start)\s{1,4}(?:of\s{1,4})?)?(?:new|updated|revised|real|actual|true|overriding|override|secret|hidden|priority|admin)\s{1,4}(?:(?:system|admin|developer|priority)\s{1,4})?(?:instructions?|prompt|directives?|orders|rules))`;
const AFTER_SENTENCE = String.raw`[.!?]\s{1,4}[ \t>*_"'“‘#=[(-]{0,14}(?:new|updated|revised)\s{1,4}(?:instructions?|directives?|orders|rules)`;
/** Over the joined batch, which starts with a separator too. */
const TAG_GATE = new RegExp(`${TAG}|[\\n\\u0000]${AT_LINE_START}|${AFTER_SENTENCE}`, 'gi');
/**
 * Over one string: the same, plus its start as a line start, tested on its own (`(?:^|\n)`
 * as a branch would make the engine try `^` at every position: 4.5% of the bench's CPU).
 */
const TAG_GATE_START = new RegExp(`^${AT_LINE_START}`, 'i');
/**
 * The injection gate: the override verbs with their objects (above), and for the other
 * detectors the word pairs they cannot match without ("system prompt", "instructions above",
 * "you are no(w)", "safety filters", ...), so prose that merely says "prompt", "above",
 * "content" or "safety" skips all injection detectors.
 */
const INJECTION_GATE = new RegExp(
  String.raw`\b(?:${OVERRIDE_VERB}|(?:system|initial|hidden|secret|original|confidential)\s{1,4}(?:prompt|message|instructions)|(?:instructions|prompt|words|text|everything)\s{1,4}(?:above|verbatim|before\s{1,4}this)|you(?:\s{1,4}(?:are\s{1,4}no|will\s{1,4}now|shall\s{1,4}now|have\s{1,4}(?:now\s{1,4})?become)|['’]re\s{1,4}now)|from\s{1,4}now|pretend|imagine|act(?:ing)?\s{1,4}as|role-?play|behave\s{1,4}(?:like|as)|(?:respond|answer)\s{1,4}as|anything\s{1,4}now|(?:developer|dev|god|sudo|unrestricted|uncensored|unfiltered|jailbroken|dan)\s{0,4}mode|jailbreak|(?:ethical|moral|safety|content)\s{1,4}(?:guidelines|restrictions|constraints|filters?|limits|guardrails))|<\||\[\/?inst\]|<<\/?sys>>|_of_turn>`,
  'gi',
);
/**
 * Every injection detector in one regex (case-insensitive, so a superset). Where it finds
 * nothing, no injection detector can match: it would match at least where the first
 * detector's match starts. So the detectors only run, one by one, on text where this found
 * something, i.e. on real injection attempts, and ordinary text pays one pass, not one per
 * detector.
 */
const ANY_INJECTION = new RegExp(
  INJECTION_DETECTORS.map((d) => `(?:${d.pattern.source})`).join('|'),
  'i',
);
// Numbered groups would shift under the join; the injection patterns have none (a test checks
// it: checked here, at load, it compiled this regex at every start, about 1.2 s; issue 25).
/**
 * dan_persona's anchor, apart from the injection gate: only the capitalised DAN is the
 * persona, and one case-sensitive literal costs a fraction of a case-insensitive `dan\b`
 * alternative in the gate (which slowed the whole gate down by half, measured on the bench).
 */
const DAN_GATE = /DAN\b/g;
const NON_ASCII = /[\u0080-\uFFFF]/;

/** Gate bits per string. */
const G_NON_ASCII = 1;
const G_SHAPE = 2;
const G_WORD = 4;
const G_PII = 8;
const G_PHRASE = 16;
const G_INJECTION = 32;
/** The gates taken on the folded text. */
const MATCH_GATES = G_SHAPE | G_WORD | G_PII;
/** The gates taken on the injection skeleton. */
const PHRASE_GATES = G_PHRASE | G_INJECTION;

/** The unicode detectors that need a {@link UNICODE_SPECIAL} character, and the last one. */
const SPECIAL_DETECTORS = UNICODE_DETECTORS.filter((d) => d.name !== 'mixed_script_word');
const UNICODE_SPECIAL_ALL = new RegExp(UNICODE_SPECIAL.source, 'g');
/** Which kinds of special character a string holds (bits below), per detector name. */
const K_PLANE14 = 1; // U+DB40: tag characters, supplementary variation selectors
const K_VARIATION = 2; // U+FE00–U+FE0F
const K_BIDI = 4;
const K_ZERO_WIDTH = 8; // U+200B, U+2060–U+2064, U+180E, U+FEFF
const K_JOINER = 16; // U+200C, U+200D
const K_OTHER = 32; // soft hyphen, CGJ: only removed, no detector of their own
const KINDS_FOR: Readonly<Record<string, number>> = {
  unicode_tag_characters: K_PLANE14,
  variation_selector_run: K_PLANE14 | K_VARIATION,
  bidi_control: K_BIDI,
  zero_width_character: K_ZERO_WIDTH,
  zero_width_joiner_in_word: K_JOINER,
};
const SPECIAL_KINDS = SPECIAL_DETECTORS.map((d) => {
  const kinds = KINDS_FOR[d.name];
  if (kinds === undefined) throw new Error(`no special-character kinds for ${d.name}`);
  return kinds;
});

/**
 * The kinds of {@link UNICODE_SPECIAL} characters in `text`: one regex pass that stops only
 * at those (rare) characters, so each unicode detector scans only strings that hold a
 * character it can match.
 */
function specialKinds(text: string): number {
  const re = UNICODE_SPECIAL_ALL;
  re.lastIndex = 0;
  let kinds = 0;
  while (re.test(text)) {
    const c = text.charCodeAt(re.lastIndex - 1);
    if (c === 0xdb40) kinds |= K_PLANE14;
    else if (c >= 0xfe00 && c <= 0xfe0f) kinds |= K_VARIATION;
    else if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) kinds |= K_BIDI;
    else if (c === 0x200c || c === 0x200d) kinds |= K_JOINER;
    else if (c === 0x00ad || c === 0x034f) kinds |= K_OTHER;
    else kinds |= K_ZERO_WIDTH;
  }
  re.lastIndex = 0;
  return kinds;
}
const MIXED_SCRIPT_DETECTORS = UNICODE_DETECTORS.filter((d) => d.name === 'mixed_script_word');
/** Shorter strings cannot hold any pattern except a lone unicode control character. */
const MIN_PATTERN_LENGTH = 6;
/**
 * Short ASCII identifiers (most object keys) cannot hold any pattern either: every secret
 * shape is longer or needs punctuation, PII needs `@`, `+`, separators or 13+ digits after
 * a letter, injections need spaces or brackets.
 */
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,15}$/;
/**
 * Joins the batch for the gates (and starts it). No gate matches across it, and `\b` sees
 * it as a non-word character, like a string's start or end; TAG_GATE takes it for a line
 * start, and a match ends after it, so the hit counts for the string that follows.
 */
const SEPARATOR = '\u0000';

/** What scanning a batch of strings produced. */
export interface BatchScan {
  /** Every span that produced a finding. */
  spans: Span[];
  /** Per string: the cleaned text, or undefined when it is unchanged. */
  cleaned: (string | undefined)[];
}

/**
 * Scans a batch of decoded strings. Each gate runs once over the whole batch (the strings
 * joined by a separator no gate can match) and marks the strings it accepts, skipping to the
 * next string after a hit; per string, each detector group (secrets, PII, injection,
 * unicode) runs only when its gate accepted the string, which keeps the cost for ordinary
 * text to a few linear scans of the batch and no per-string regex calls.
 *
 * Unicode anomalies are matched on the original text; every other detector, and its gate,
 * on the folded text ({@link fold}: NFKC, invisibles removed, so `ＡＫＩＡ…` and
 * `AKIA\u200B…` are keys), injections on its skeleton when look-alikes may be present
 * (mixed scripts or anything folded). ASCII text is its own fold. Non-ASCII strings are
 * gated on their own. A redaction covers exactly the original characters the match was
 * folded from; the rest of the string is left as it was. Unchanged strings stay undefined
 * in `cleaned`.
 */
export function scanBatch(texts: readonly string[]): BatchScan {
  const spans: Span[] = [];
  // Sparse: only strings that changed get an entry.
  const cleaned: (string | undefined)[] = [];
  const count = texts.length;
  const gates = new Uint8Array(count);
  // The ASCII strings worth scanning, gated together; the rest are gated one by one (their
  // working text may differ, and one non-Latin-1 string would make the joined text two-byte,
  // which every regex scans slower).
  const batch: number[] = [];
  const parts: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const text = texts[index] as string;
    if (NON_ASCII.test(text)) gates[index] = G_NON_ASCII;
    else if (candidate(text)) {
      batch.push(index);
      parts.push(text);
    }
  }
  if (parts.length > 0) {
    const starts = new Int32Array(parts.length + 1);
    // The joined text starts with a separator too, so every string starts after one.
    let offset = 1;
    for (let k = 0; k < parts.length; k += 1) {
      starts[k] = offset;
      offset += (parts[k] as string).length + 1;
    }
    starts[parts.length] = offset;
    const joined = SEPARATOR + parts.join(SEPARATOR);
    const found = new Uint8Array(parts.length);
    mark(SECRET_SHAPE_GATE, joined, starts, found, G_SHAPE);
    mark(SECRET_WORD_GATE, joined, starts, found, G_WORD);
    mark(PII_GATE, joined, starts, found, G_PII);
    mark(PHRASE_GATE, joined, starts, found, G_PHRASE);
    mark(INJECTION_GATE, joined, starts, found, G_INJECTION);
    mark(DAN_GATE, joined, starts, found, G_INJECTION);
    mark(TAG_GATE, joined, starts, found, G_INJECTION);
    for (let k = 0; k < batch.length; k += 1) gates[batch[k] as number] = found[k] as number;
  }

  // Reused per string; only touched when a detector matched.
  const local: Span[] = [];
  for (let index = 0; index < count; index += 1) {
    let g = gates[index] as number;
    if (g === 0) continue;
    const text = texts[index] as string;
    let working = text;
    let injectionText = text;
    let folded: Folded | undefined;
    if ((g & G_NON_ASCII) !== 0) {
      const kinds = specialKinds(text);
      const mixed = MIXED_SCRIPT.test(text);
      for (let k = 0; k < SPECIAL_DETECTORS.length; k += 1) {
        const d = SPECIAL_DETECTORS[k] as Detector;
        if ((kinds & (SPECIAL_KINDS[k] as number)) !== 0) run(d, text, index, spans);
      }
      if (mixed) for (const d of MIXED_SCRIPT_DETECTORS) run(d, text, index, spans);
      folded = fold(text);
      working = folded.text;
      if (!candidate(working)) continue;
      injectionText = mixed || folded.edits.length > 0 ? unconfuse(working) : working;
      g |= matchGates(working) | phraseGates(injectionText);
    }
    if ((g & MATCH_GATES) !== 0) {
      const shape = (g & G_SHAPE) !== 0;
      if (shape || (g & G_WORD) !== 0) {
        for (const d of SECRET_DETECTORS) {
          // A key-shape anchor implies the shape gate; word detectors run under either gate.
          if (shape || WORD_ANCHORED_SECRETS.has(d)) run(d, working, index, local);
        }
      }
      if ((g & G_PII) !== 0) {
        for (const d of PII_DETECTORS) run(d, working, index, local);
      }
    }
    if (local.length > 0) {
      const kept = dropOverlaps(local);
      local.length = 0;
      if (folded !== undefined && folded.edits.length > 0) {
        for (const span of kept)
          [span.start, span.end] = originalRange(folded, span.start, span.end);
      }
      spans.push(...kept);
      const redact = kept.filter(
        (span) => actionFor(span.detector.category, span.detector.severity) === ACTIONS.REDACT,
      );
      if (redact.length > 0) cleaned[index] = applyRedactions(text, redact);
    }
    if ((g & PHRASE_GATES) === PHRASE_GATES && ANY_INJECTION.test(injectionText)) {
      for (const d of INJECTION_DETECTORS) run(d, injectionText, index, spans);
    }
  }
  return { spans, cleaned };
}

/** Whether a string is long enough and not a plain identifier (see PLAIN_IDENTIFIER). */
function candidate(text: string): boolean {
  return text.length >= MIN_PATTERN_LENGTH && !(text.length <= 16 && PLAIN_IDENTIFIER.test(text));
}

/**
 * Runs a global gate over the joined batch and sets `bit` for every string it matches in,
 * moving on to the next string after a hit. `test` on a global regex allocates nothing.
 */
function mark(
  gateRe: RegExp,
  joined: string,
  starts: Int32Array,
  gates: Uint8Array,
  bit: number,
): void {
  gateRe.lastIndex = 0;
  let index = 0;
  const last = gates.length - 1;
  while (gateRe.test(joined)) {
    // Gates match at least one character and end inside a string (TAG_GATE may start on the
    // separator before it), so the last matched character names the string.
    const at = gateRe.lastIndex - 1;
    while (index < last && (starts[index + 1] as number) <= at) index += 1;
    gates[index] = (gates[index] as number) | bit;
    if (index >= last) break;
    gateRe.lastIndex = starts[index + 1] as number;
  }
  gateRe.lastIndex = 0;
}

/** The secret and PII gate bits of one string, gated on its own. */
function matchGates(text: string): number {
  let g = 0;
  if (test(SECRET_SHAPE_GATE, text)) g |= G_SHAPE;
  if (test(SECRET_WORD_GATE, text)) g |= G_WORD;
  if (test(PII_GATE, text)) g |= G_PII;
  return g;
}

/** The injection gate bits of one string, gated on its own. */
function phraseGates(text: string): number {
  return test(PHRASE_GATE, text) &&
    (test(INJECTION_GATE, text) ||
      test(DAN_GATE, text) ||
      test(TAG_GATE, text) ||
      TAG_GATE_START.test(text))
    ? PHRASE_GATES
    : 0;
}

function test(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  const hit = re.test(text);
  re.lastIndex = 0;
  return hit;
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

/**
 * Replaces each span of `text` with a marker; spans that overlap once mapped back to the
 * original (two matches folded from one cluster) share one.
 */
function applyRedactions(text: string, spans: Span[]): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = '';
  let cursor = 0;
  for (const span of sorted) {
    if (span.start < cursor) {
      cursor = Math.max(cursor, span.end);
      continue;
    }
    out += text.slice(cursor, span.start) + REDACTED;
    cursor = span.end;
  }
  return out + text.slice(cursor);
}
