import { expect } from 'chai';
import {
  INJECTION_DETECTORS,
  PII_DETECTORS,
  SECRET_DETECTORS,
  UNICODE_DETECTORS,
  sanitize,
} from '../../../src/security/index.js';
import { MUST_CATCH } from '../../fixtures/sanitizer/must-catch.js';
import { MUST_STAY_CLEAN } from '../../fixtures/sanitizer/must-stay-clean.js';

describe('sanitizer corpora', () => {
  it('catches every must-catch case with the named detector and classification (100%)', () => {
    const misses: string[] = [];
    for (const c of MUST_CATCH) {
      const result = sanitize({ input_data: { field: c.text } });
      const named = result.findings.some((f) => f.pattern_name === c.pattern);
      const leaked = c.secret !== undefined && (result.cleaned_content ?? '').includes(c.secret);
      if (!named || result.classification !== c.classification || leaked) {
        misses.push(
          `${c.pattern}: ${JSON.stringify(c.text).slice(0, 60)} → ${result.classification}`,
        );
      }
    }
    const rate = (MUST_CATCH.length - misses.length) / MUST_CATCH.length;
    console.log(
      `      detection rate: ${(rate * 100).toFixed(1)}% (${MUST_CATCH.length - misses.length}/${MUST_CATCH.length})`,
    );
    expect(MUST_CATCH.length).to.be.at.least(150);
    expect(misses).to.deep.equal([]);
  });

  it('leaves every must-stay-clean case clean with no findings (0% false positives)', () => {
    const falsePositives: string[] = [];
    for (const text of MUST_STAY_CLEAN) {
      const result = sanitize({ yaml_text: text });
      if (result.classification !== 'clean' || result.findings.length > 0) {
        const names = result.findings.map((f) => f.pattern_name).join(',');
        falsePositives.push(`${JSON.stringify(text).slice(0, 60)} → ${names}`);
      }
    }
    const rate = falsePositives.length / MUST_STAY_CLEAN.length;
    console.log(
      `      false-positive rate: ${(rate * 100).toFixed(1)}% (${falsePositives.length}/${MUST_STAY_CLEAN.length})`,
    );
    expect(MUST_STAY_CLEAN.length).to.be.at.least(150);
    expect(falsePositives).to.deep.equal([]);
  });

  it('has must-catch cases for every detector', () => {
    const covered = new Set(MUST_CATCH.map((c) => c.pattern));
    const all = [
      ...SECRET_DETECTORS,
      ...PII_DETECTORS,
      ...INJECTION_DETECTORS,
      ...UNICODE_DETECTORS,
    ].map((d) => d.name);
    expect(all.filter((name) => !covered.has(name))).to.deep.equal([]);
  });

  it('catches the same cases when they arrive as object keys', () => {
    const misses = MUST_CATCH.filter((c) => c.text.length <= 200)
      .filter((c) => {
        const result = sanitize({ data: { [c.text]: 1 } });
        return !result.findings.some((f) => f.pattern_name === c.pattern);
      })
      .map((c) => c.pattern);
    expect(misses).to.deep.equal([]);
  });
});
