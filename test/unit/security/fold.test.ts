import { expect } from 'chai';
import fc from 'fast-check';
import { fold, originalRange, sanitize } from '../../../src/security/index.js';

const INVISIBLE =
  /[\u200B-\u200D\u2060-\u2064\u180E\uFEFF\u00AD\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]|\u034F/gu;
/** What fold must produce, by definition. */
const reference = (text: string): string => text.normalize('NFKC').replace(INVISIBLE, '');

/**
 * Pieces that exercise every way NFKC changes length or composes: full-width and styled
 * letters, ligatures, expansions, combining marks before and after their base, half-width
 * kana with voicing marks, Hangul jamo (conjoining, compatibility, half-width), invisibles,
 * emoji with joiners, tag characters, lone surrogates, and plain ASCII around them.
 */
const PIECES = [
  'a',
  'Z',
  '7',
  ' ',
  '=',
  '\n',
  'AKIA',
  '\uFF21',
  '\uFF4B',
  '\uFF17',
  '\u{1D400}',
  '\u{1D7D7}',
  '\uFB01',
  '\uFB03',
  '\u2460',
  '\u3392',
  '\uFDFA',
  '\u00BD',
  '\u2126',
  'e\u0301',
  '\u0301',
  '\u0323\u0301',
  'A\u030A',
  '\u212B',
  '\uFF76\uFF9E',
  '\uFF9E',
  '\u1100\u1161\u11A8',
  '\u1161',
  '\u3131\u314F',
  '\uFFA1\uFFC2',
  '\uAC00\u11A8',
  '\u0928\u093C',
  '\u200B',
  '\u200D',
  '\u00AD',
  '\uFEFF',
  '\u{E0041}',
  '\u{1F468}\u200D\u{1F4BB}',
  '\u{1F389}',
  '\uD800',
  '\uDC00',
  'é',
  'ß',
  'д',
  '中',
  '，',
  '\u3000',
];
// At most 2 combining marks per piece: below fold's 30-mark cluster limit (stream-safe text).
const pieced = fc.array(fc.constantFrom(...PIECES), { maxLength: 15 }).map((p) => p.join(''));

describe('fold (NFKC + invisibles removed, with a map back to the original)', () => {
  it('folds full-width, styled and invisible-split text to plain ASCII', () => {
    expect(fold('\uFF21\uFF2B\uFF29\uFF21').text).to.equal('AKIA');
    expect(fold('\u{1D400}\u{1D40A}\u{1D408}\u{1D400}').text).to.equal('AKIA');
    expect(fold('AK\u200BIA').text).to.equal('AKIA');
    expect(fold('\uFF76\uFF9E').text).to.equal('\u30AC');
  });

  it('returns ASCII and already-folded text as the very same string with no edits', () => {
    for (const text of ['plain ascii', 'Система и 中文。', 'café 👍🏽', 'e\u0301'.normalize('NFC')]) {
      const folded = fold(text);
      expect(folded.text).to.equal(text);
      expect(folded.edits).to.deep.equal([]);
    }
  });

  it('equals NFKC with invisibles removed on any mix of tricky pieces', () => {
    fc.assert(
      fc.property(pieced, (text) => {
        expect(fold(text).text).to.equal(reference(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('maps every folded range back to whole original clusters', () => {
    fc.assert(
      fc.property(pieced, fc.nat(), fc.nat(), (text, a, b) => {
        const folded = fold(text);
        const n = folded.text.length;
        fc.pre(n > 0);
        const from = a % n;
        const to = from + 1 + (b % (n - from));
        const [start, end] = originalRange(folded, from, to);
        expect(start).to.be.within(0, end);
        expect(end).to.be.at.most(text.length);
        // The cut points are boundaries: folding the three parts gives the whole fold...
        const before = reference(text.slice(0, start));
        const middle = reference(text.slice(start, end));
        expect(before + middle + reference(text.slice(end))).to.equal(folded.text);
        // ...and the middle part holds the whole folded range.
        expect(before.length).to.be.at.most(from);
        expect(before.length + middle.length).to.be.at.least(to);
      }),
      { numRuns: 3000 },
    );
  });

  it('stays linear on long runs of combining marks (NFKC reorders them quadratically)', () => {
    const text = `a${'\u0301\u0316'.repeat(200_000)}`;
    const started = performance.now();
    const folded = fold(text);
    expect(performance.now() - started).to.be.below(1500);
    expect(folded.text.length).to.be.at.most(text.length);
  });

  it('covers every code point that can combine with what precedes it (checked against the platform)', () => {
    // A character combines backwards when the first code point of its NFKD has a non-zero
    // combining class (it reorders against U+0334 / U+0301) or is the second element of a
    // canonical composition. fold must start no cluster at such a character, i.e. fold of
    // "x" + c must match NFKC, which only holds when c is inside the same cluster.
    const seconds = new Set<number>();
    const combining = (cp: number): boolean => {
      const s = String.fromCodePoint(cp);
      return (
        `a\u0301${s}`.normalize('NFD') !== `a\u0301${s}` ||
        `a${s}\u0334`.normalize('NFD') !== `a${s}\u0334`
      );
    };
    for (let cp = 0; cp <= 0x10ffff; cp += 1) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const s = String.fromCodePoint(cp);
      const d = s.normalize('NFD');
      if (d !== s && d.normalize('NFC') === s) {
        for (const part of [...d].slice(1)) seconds.add(part.codePointAt(0) as number);
      }
    }
    const missed: string[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp += 1) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const first = String.fromCodePoint(cp).normalize('NFKD').codePointAt(0) as number;
      if (!seconds.has(first) && !combining(first)) continue;
      // Before every such code point, in front of a base it may combine with.
      for (const base of ['e', '\u1100', '\uAC00', '\u30AB', '\u0B47']) {
        const text = `${base}${String.fromCodePoint(cp)}`;
        if (fold(text).text !== reference(text)) missed.push(cp.toString(16));
      }
    }
    expect(missed).to.deep.equal([]);
  });
});

describe('redaction of folded matches', () => {
  const KEY = 'AKIAIOSFODNN7EXAMPLE';
  /**
   * Ways of writing one character of the key that fold back to it (an invisible goes before
   * the character, so it sits inside the key, not after its end).
   */
  const disguise = (char: string, how: number): string => {
    const code = char.charCodeAt(0);
    switch (how % 4) {
      case 0:
        return char;
      case 1:
        return String.fromCharCode(code + 0xfee0); // full-width
      case 2:
        return /[A-Z]/.test(char)
          ? String.fromCodePoint(0x1d400 + code - 65) // mathematical bold capital
          : String.fromCodePoint(0x1d7ce + code - 48); // mathematical bold digit
      default:
        return `\u200B${char}`;
    }
  };
  /** Text around the key that cannot form or extend a finding of its own. */
  const surrounding = fc
    .array(
      fc.constantFrom(
        'a',
        'b',
        'z',
        ' ',
        ',',
        '.',
        'é',
        'e\u0301',
        'д',
        '中',
        '，',
        '\uFF41',
        '\uFB01',
        '\u3000',
        '👍🏽',
      ),
      { maxLength: 20 },
    )
    .map((p) => p.join(''));

  it('never leaves the key recoverable and never touches the text around it', () => {
    fc.assert(
      fc.property(
        surrounding,
        surrounding,
        fc.array(fc.nat(3), { minLength: KEY.length, maxLength: KEY.length }),
        (before, after, hows) => {
          const disguised = [...KEY]
            .map((c, k) => disguise(c, k === 0 ? (hows[0] ?? 0) % 3 : (hows[k] ?? 0)))
            .join('');
          const text = `${before} ${disguised} ${after}`;
          const result = sanitize({ t: text });
          const cleaned = (result.cleaned_value as { t: string }).t;
          expect(result.findings.map((f) => f.pattern_name)).to.include('aws_access_key_id');
          expect(cleaned).to.equal(`${before} [REDACTED] ${after}`);
          expect(fold(cleaned).text).not.to.include(KEY);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('redacts a full-width key and keeps the full-width text around it', () => {
    const text =
      '鍵：\uFF21\uFF2B\uFF29\uFF21\uFF29\uFF2F\uFF33\uFF26\uFF2F\uFF24\uFF2E\uFF2E\uFF17\uFF25\uFF38\uFF21\uFF2D\uFF30\uFF2C\uFF25。';
    const result = sanitize({ t: text });
    expect(result.classification).to.equal('redacted');
    expect(result.cleaned_value).to.deep.equal({ t: '鍵：[REDACTED]。' });
  });

  it('redacts the whole compatibility character when a match starts inside it', () => {
    // "½" folds to "1⁄2"; the address match starts at its "2".
    const result = sanitize({ t: 'from \u00BD.3.4.5 today' });
    expect(result.findings.map((f) => f.pattern_name)).to.deep.equal(['ipv4_address']);
    expect(result.cleaned_value).to.deep.equal({ t: 'from [REDACTED] today' });
    const ligature = sanitize({ t: 'x \uFB00oo@example.com y' });
    expect(ligature.cleaned_value).to.deep.equal({ t: 'x [REDACTED] y' });
  });

  it('folds secret-named keys too', () => {
    const result = sanitize({ '\uFF50\uFF41\uFF53\uFF53\uFF57\uFF4F\uFF52\uFF44': 'hunter22' });
    expect(result.findings.map((f) => f.pattern_name)).to.include('secret_named_field');
    expect(result.cleaned_value).to.deep.equal({
      '\uFF50\uFF41\uFF53\uFF53\uFF57\uFF4F\uFF52\uFF44': '[REDACTED]',
    });
  });
});
