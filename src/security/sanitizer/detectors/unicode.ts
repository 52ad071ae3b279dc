import { detector, type Detector } from '../detector.js';
import { FINDING_CATEGORIES as C, SEVERITIES as S } from '../types.js';

/**
 * Subdivision flags (🏴 + tag letters + cancel tag) are the one legitimate use of tag
 * characters; they are removed before the tag check.
 */
const TAG_FLAG = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,8}\u{E007F}/gu;
const ASCII_ALNUM = /[A-Za-z0-9]/;
/** Latin letters (Basic, Latin-1, Extended-A/B, Extended Additional), as plain ranges. */
const LATIN = 'A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u024F\\u1E00-\\u1EFF';
/**
 * Cyrillic letters, plus the Greek letters that pass for Latin ones (plain ranges are much
 * faster than Script properties). Other Greek letters are left out on purpose: `μs`, `Δt`
 * or `λx` are ordinary technical notation, not disguised words.
 */
const CYRILLIC_GREEK =
  '\\u0400-\\u0482\\u048A-\\u052F\\uA640-\\uA66E\\uA680-\\uA69D\\u0391\\u0392\\u0395\\u0396\\u0397\\u0399\\u039A\\u039C\\u039D\\u039F\\u03A1\\u03A4\\u03A5\\u03A7\\u03B1\\u03B9\\u03BA\\u03BD\\u03BF\\u03C1\\u03C4\\u03C5';
/**
 * A Cyrillic or Greek letter next to a Latin one: the mark of a mixed-script word. It starts
 * with one plain range around those letters, which Latin text rarely contains, so the scan
 * skips ahead instead of testing the long Latin class at every position; the exact classes
 * are checked around the candidate.
 */
export const MIXED_SCRIPT = new RegExp(
  `[\\u0370-\\u052F\\uA640-\\uA69F](?:(?<=[${LATIN}][${CYRILLIC_GREEK}])|(?=[${LATIN}]))(?<=[${CYRILLIC_GREEK}])`,
);

/**
 * Invisible and direction-changing characters. Zero-width joiners are normal inside emoji
 * sequences and ZWNJ/ZWJ inside Persian, Indic and other scripts, so ZWJ/ZWNJ only count
 * between two ASCII letters or digits (where they only serve to split a word).
 */
export const UNICODE_DETECTORS: readonly Detector[] = [
  detector('unicode_tag_characters', C.UNICODE_ANOMALY, S.HIGH, /[\u{E0000}-\u{E007F}]+/gu, {
    validate: (m, text) => {
      // Part of a well-formed subdivision flag?
      const before = text.lastIndexOf('\u{1F3F4}', m.index);
      if (before === -1 || before + 2 !== m.index) return true;
      TAG_FLAG.lastIndex = before;
      const flag = TAG_FLAG.exec(text);
      return !(
        flag &&
        flag.index === before &&
        flag.index + flag[0].length === m.index + m[0].length
      );
    },
  }),
  // Runs of variation selectors carry hidden bytes ("emoji smuggling"); one selector after
  // an emoji is ordinary.
  detector(
    'variation_selector_run',
    C.UNICODE_ANOMALY,
    S.HIGH,
    /(?:[\uFE00-\uFE0F]|[\u{E0100}-\u{E01EF}]){2,}/gu,
  ),
  detector('bidi_control', C.UNICODE_ANOMALY, S.HIGH, /[\u202A-\u202E\u2066-\u2069]/g),
  detector(
    'zero_width_character',
    C.UNICODE_ANOMALY,
    S.MEDIUM,
    /[\u200B\u2060\u180E\u2061-\u2064]|(?<!^)\uFEFF/g,
  ),
  detector('zero_width_joiner_in_word', C.UNICODE_ANOMALY, S.MEDIUM, /[\u200C\u200D]+/g, {
    validate: (m, text) =>
      ASCII_ALNUM.test(text[m.index - 1] ?? '') &&
      ASCII_ALNUM.test(text[m.index + m[0].length] ?? ''),
  }),
  // A letter word mixing Latin with Cyrillic or Greek has the two scripts side by side
  // somewhere; matching the adjacent pair is exact and far cheaper than matching words.
  detector('mixed_script_word', C.UNICODE_ANOMALY, S.MEDIUM, new RegExp(MIXED_SCRIPT.source, 'g')),
];

/**
 * Every character the detectors above except `mixed_script_word` can match, and every
 * {@link INVISIBLE} one (as UTF-16 code units: U+DB40 starts every plane-14 character). A
 * string without any needs none of those detectors and no invisible-free copy.
 */
export const UNICODE_SPECIAL =
  /[\u00AD\u180E\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\uDB40]|[\u200B-\u200D]|[\uFE00-\uFE0F]|\u034F/;

/** Characters removed before secret and injection scans (they only hide words). */
export const INVISIBLE =
  /[\u200B-\u200D\u2060-\u2064\u180E\uFEFF\u00AD\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]|\u034F/gu;
