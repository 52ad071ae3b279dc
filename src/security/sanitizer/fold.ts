import { INVISIBLE } from './detectors/unicode.js';

/**
 * Folding: the text every secret, PII and injection detector sees. `fold(text).text` is
 * `text.normalize('NFKC')` with the {@link INVISIBLE} characters removed, so `ＡＫＩＡ…`,
 * `𝐀𝐊𝐈𝐀…` and `AKIA\u200B…` all read `AKIA…`; `fold(text).edits` maps every folded offset
 * back to the original characters it came from, so a match is redacted in the original.
 *
 * NFKC changes lengths both ways (`ﬁ` → `fi`, `ｶﾞ` → `ガ`, `e\u0301` → `é`) and may compose
 * across code points, so the text is cut into clusters at code points before which NFKC
 * always has a boundary (anything that cannot combine with what precedes it): each cluster
 * normalizes on its own to exactly its share of the whole text's NFKC, and a cluster is the
 * smallest piece of the original a folded character can be traced to. (Exactly, for text
 * without runs of more than 30 combining marks; see MAX_FOLLOWERS.)
 */

/** The code unit's NFKC differs from itself. */
const F_CHANGE = 1;
/** May combine with the code point before it under NFKC (a superset, see BACK_BMP). */
const F_BACK = 2;
/** Removed after NFKC (INVISIBLE). */
const F_DROP = 4;
/** A high surrogate: the flags are the pair's (see astralFlags). */
const F_HIGH = 8;

/**
 * Code points whose NFKC decomposition starts with a character that can combine with a
 * preceding one (canonical combining class ≠ 0, or the second of a composition pair): every
 * such character is a mark, a conjoining Hangul vowel or trailing consonant, a Hangul
 * compatibility or half-width jamo, a half-width kana voicing mark or a Kirat Rai vowel
 * sign. A superset is safe (clusters only get longer); the fold test checks it against the
 * platform's Unicode data, code point by code point.
 */
const BACK_BMP = /^[\p{M}\u1160-\u11FF\u3130-\u318F\uD7B0-\uD7FF\uFF9E-\uFFDF]$/u;
const BACK_ASTRAL = /^[\p{M}\u{16D40}-\u{16D7F}]$/u;
const DROP_ONE = new RegExp(`^(?:${INVISIBLE.source})$`, 'u');

/** Flags of each BMP code unit, computed once from the platform's Unicode data (~10 ms). */
const FLAGS = ((): Uint8Array => {
  const flags = new Uint8Array(0x10000);
  for (let c = 0x80; c < 0x10000; c += 1) {
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff) flags[c] = F_HIGH;
      continue;
    }
    const s = String.fromCharCode(c);
    let f = 0;
    if (s.normalize('NFKC') !== s) f |= F_CHANGE;
    if (BACK_BMP.test(s)) f |= F_BACK;
    if (DROP_ONE.test(s)) f |= F_DROP;
    flags[c] = f;
  }
  return flags;
})();

/**
 * Flags of supplementary code points, one block of 1024 (one high surrogate) at a time,
 * filled the first time a block is met: a constant table of Unicode data, like FLAGS, only
 * built lazily because most blocks never appear (emoji do, once).
 */
const ASTRAL = new Map<number, Uint8Array>();

function astralFlags(high: number, low: number): number {
  let block = ASTRAL.get(high);
  if (block === undefined) {
    block = new Uint8Array(1024);
    for (let k = 0; k < 1024; k += 1) {
      const s = String.fromCharCode(high, 0xdc00 + k);
      let f = 0;
      if (s.normalize('NFKC') !== s) f |= F_CHANGE;
      if (BACK_ASTRAL.test(s)) f |= F_BACK;
      if (DROP_ONE.test(s)) f |= F_DROP;
      block[k] = f;
    }
    ASTRAL.set(high, block);
  }
  return block[low - 0xdc00] as number;
}

/** Flags and width (code units) of the code point at `i`. */
function at(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0x80) return 1 << 4;
  const f = FLAGS[c] as number;
  if (f !== F_HIGH) return f | (1 << 4);
  const low = text.charCodeAt(i + 1);
  // A lone surrogate is left as it is (NFKC does too).
  if (low < 0xdc00 || low > 0xdfff) return 1 << 4;
  return astralFlags(c, low) | (2 << 4);
}

/** A folded text and the map back to the original. */
export interface Folded {
  /** NFKC with invisibles removed; the very input string when folding changes nothing. */
  readonly text: string;
  /**
   * The clusters that changed, in order, four numbers each: folded start and end, original
   * start and end. Between them folded and original text are the same, shifted. Empty when
   * `text` is the input.
   */
  readonly edits: readonly number[];
}

const UNCHANGED: readonly number[] = Object.freeze([]);

/**
 * A cluster ends after this many combining followers, as in Unicode's Stream-Safe Text
 * Format (UAX #15: no real text has more than 30 non-starters in a row). NFKC reorders
 * marks by insertion, quadratic in their number: `a` + 100 000 alternating marks takes
 * ICU about 5 s as one string, a few ms in clusters of 30.
 */
const MAX_FOLLOWERS = 30;

/** Folds `text` (see the module comment). ASCII text is returned as it is, at once. */
export function fold(text: string): Folded {
  const length = text.length;
  let parts: string[] | undefined;
  let edits: number[] | undefined;
  let copied = 0;
  let size = 0;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    // Most code units need nothing: ASCII, and BMP letters with no flags (one table read).
    if (c < 0x80 || FLAGS[c] === 0) {
      i += 1;
      continue;
    }
    const fw = at(text, i);
    const width = fw >> 4;
    if ((fw & (F_CHANGE | F_BACK | F_DROP)) === 0) {
      i += width;
      continue;
    }
    // The cluster: this code point, or the starter before it when it combines backwards
    // (that starter was unflagged, so it is not emitted yet), plus every combining follower.
    let start = i;
    if ((fw & F_BACK) !== 0 && i > copied) {
      start = i - 1;
      const prev = text.charCodeAt(start);
      if (prev >= 0xdc00 && prev <= 0xdfff && start > copied) {
        const high = text.charCodeAt(start - 1);
        if (high >= 0xd800 && high <= 0xdbff) start -= 1;
      }
    }
    let end = i + width;
    for (let followers = 0; end < length && followers < MAX_FOLLOWERS; followers += 1) {
      const next = at(text, end);
      if ((next & F_BACK) === 0) break;
      end += next >> 4;
    }
    const segment = text.slice(start, end);
    const out = dropInvisible(segment.normalize('NFKC'));
    i = end;
    if (out === segment) continue;
    parts ??= [];
    edits ??= [];
    const from = size + (start - copied);
    parts.push(text.slice(copied, start), out);
    edits.push(from, from + out.length, start, end);
    size = from + out.length;
    copied = end;
  }
  if (parts === undefined || edits === undefined) return { text, edits: UNCHANGED };
  parts.push(text.slice(copied));
  return { text: parts.join(''), edits };
}

function dropInvisible(text: string): string {
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 && ((FLAGS[c] as number) & (F_DROP | F_HIGH)) !== 0) {
      return text.replace(INVISIBLE, '');
    }
  }
  return text;
}

/**
 * The original range `[start, end)` of the characters folded into `[from, to)` of
 * `folded.text` (`from < to`): whole clusters, so it covers every original character that
 * contributed to the folded range and no other, except invisibles inside it.
 */
export function originalRange(folded: Folded, from: number, to: number): [number, number] {
  return [toOriginal(folded.edits, from, false), toOriginal(folded.edits, to - 1, true)];
}

/**
 * Where folded offset `p` starts (`end` false) or ends (`end` true) in the original. Edits
 * are sorted by folded end (non-decreasing); a binary search finds the first edit ending
 * after `p`.
 */
function toOriginal(edits: readonly number[], p: number, end: boolean): number {
  let low = 0;
  let high = edits.length / 4;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((edits[mid * 4 + 1] as number) <= p) low = mid + 1;
    else high = mid;
  }
  // Edit `low` (if any) is the first ending after p; it contains p when it starts at or
  // before p (an invisible's edit is empty and never contains anything).
  if (low < edits.length / 4 && (edits[low * 4] as number) <= p) {
    return edits[low * 4 + (end ? 3 : 2)] as number;
  }
  if (low === 0) return p + (end ? 1 : 0);
  const prevFoldedEnd = edits[(low - 1) * 4 + 1] as number;
  const prevOriginalEnd = edits[(low - 1) * 4 + 3] as number;
  return p - prevFoldedEnd + prevOriginalEnd + (end ? 1 : 0);
}
