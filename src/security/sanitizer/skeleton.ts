import { fold } from './fold.js';

/** Cyrillic and Greek letters that render like Latin ones (a small confusables skeleton). */
const CONFUSABLES: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  һ: 'h',
  ɡ: 'g',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  У: 'Y',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  α: 'a',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  ι: 'i',
  κ: 'k',
  τ: 't',
  υ: 'u',
  ε: 'e',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  Ζ: 'Z',
};

/** Per BMP code unit, its Latin look-alike, or itself. */
const LATIN_LOOKALIKE = ((): Uint16Array => {
  const map = new Uint16Array(0x10000);
  for (let c = 0; c < 0x10000; c += 1) map[c] = c;
  for (const [from, to] of Object.entries(CONFUSABLES)) map[from.charCodeAt(0)] = to.charCodeAt(0);
  return map;
})();

/**
 * `text` with Cyrillic and Greek look-alikes replaced by the Latin letters they pass for
 * (one code unit for one, so offsets do not move). A table pass into a reused buffer: on
 * Russian prose, where most letters are look-alikes, joining one slice per replacement
 * was several times slower.
 */
export function unconfuse(text: string): string {
  const length = text.length;
  let first = 0;
  for (; first < length; first += 1) {
    const c = text.charCodeAt(first);
    if (c >= 0x80 && LATIN_LOOKALIKE[c] !== c) break;
  }
  if (first === length) return text;
  if (scratch.length < length) scratch = new Uint16Array(Math.max(length, scratch.length * 2));
  const out = scratch;
  for (let i = first; i < length; i += 1) out[i] = LATIN_LOOKALIKE[text.charCodeAt(i)] as number;
  // A lone surrogate comes out as U+FFFD, still one unit; to the injection patterns both
  // are the same (neither a word character nor a space).
  return text.slice(0, first) + UTF16.decode(out.subarray(first, length));
}

/** Reused output buffer of {@link unconfuse} (grown as needed; synchronous use only). */
let scratch = new Uint16Array(1024);
const UTF16 = new TextDecoder('utf-16le');

/**
 * The text an injection scan should see: the {@link fold} (NFKC, invisibles removed) with
 * look-alike letters mapped to Latin. Look-alikes map one code unit to one, so offsets in
 * the skeleton are offsets in the folded text. Only used to detect, never written back.
 */
export function skeleton(text: string): string {
  return unconfuse(fold(text).text);
}
