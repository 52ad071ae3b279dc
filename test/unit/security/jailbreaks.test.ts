import { expect } from 'chai';
import { sanitize } from '../../../src/security/index.js';
import { JAILBREAKS, NEAR_MISSES } from '../../fixtures/sanitizer/jailbreaks.js';

describe('sanitizer jailbreak corpus (issue 9.16)', () => {
  it('blocks every jailbreak in every variant, naming its detector', () => {
    const misses: string[] = [];
    for (const c of JAILBREAKS) {
      const result = sanitize({ input_data: { text: c.text } });
      const names = result.findings.map((f) => f.pattern_name);
      if (result.classification !== 'blocked' || !names.includes(c.pattern)) {
        misses.push(
          `${c.pattern}: ${JSON.stringify(c.text)} → ${result.classification} [${names.join(',')}]`,
        );
      }
    }
    expect(JAILBREAKS.length).to.be.at.least(400);
    expect(misses).to.deep.equal([]);
  });

  it('leaves every near miss clean with no findings', () => {
    const flagged = NEAR_MISSES.map((text) => ({ text, result: sanitize({ text }) }))
      .filter(({ result }) => result.findings.length > 0 || result.classification !== 'clean')
      .map(
        ({ text, result }) =>
          `${JSON.stringify(text)} → ${result.findings.map((f) => f.pattern_name).join(',')}`,
      );
    expect(NEAR_MISSES.length).to.be.at.least(40);
    expect(flagged).to.deep.equal([]);
  });

  it('still only flags a bare mention of a jailbreak', () => {
    for (const text of ['this prompt is a jailbreak', 'Developer Mode enabled.']) {
      expect(sanitize({ text }).classification, text).to.equal('requires_approval');
    }
  });
});
