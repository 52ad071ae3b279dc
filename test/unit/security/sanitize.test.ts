import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { MAX_DEPTH, SanitizerDepthError, classify, sanitize } from '../../../src/security/index.js';
import { MUST_CATCH } from '../../fixtures/sanitizer/must-catch.js';
import { MUST_STAY_CLEAN } from '../../fixtures/sanitizer/must-stay-clean.js';

const AKIA = 'AKIAIOSFODNN7EXAMPLE';

describe('sanitize', () => {
  it('reports JSON-path locations for nested values and array items', () => {
    const result = sanitize({
      input_data: { notes: `key ${AKIA}` },
      steps: [{}, {}, { inputs: { prompt: 'mail bob@example.org' } }],
      'odd key': 'call +14155552671',
    });
    expect(result.findings.map((f) => [f.pattern_name, f.location])).to.have.deep.members([
      ['aws_access_key_id', '$.input_data.notes'],
      ['email_address', '$.steps[2].inputs.prompt'],
      ['phone_e164', '$["odd key"]'],
    ]);
    expect(result.classification).to.equal('redacted');
  });

  it('redacts only the matched spans and never mutates the input', () => {
    const input = { a: { b: `before ${AKIA} after`, c: 'untouched' }, d: ['x', 'y'] };
    const snapshot = JSON.stringify(input);
    const result = sanitize(input);
    expect(result.cleaned_value).to.deep.equal({
      a: { b: 'before [REDACTED] after', c: 'untouched' },
      d: ['x', 'y'],
    });
    expect(JSON.stringify(input)).to.equal(snapshot);
    expect((result.cleaned_value as { d: unknown }).d).to.equal(input.d);
  });

  it('redacts a secret held in a key and hides that key in every path', () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const result = sanitize({ outer: { [token]: { note: 'write to jane@example.com' } } });
    expect(result.cleaned_value).to.deep.equal({
      outer: { '[REDACTED]': { note: 'write to [REDACTED]' } },
    });
    const locations = result.findings.map((f) => f.location);
    expect(locations).to.have.members(['$.outer[<key 0>]', '$.outer[<key 0>].note']);
    expect(JSON.stringify(result.findings)).not.to.include(token);
  });

  it('keeps two redacted keys apart', () => {
    const result = sanitize({ [AKIA]: 1, [`x ${AKIA}`]: 2 });
    expect(Object.keys(result.cleaned_value as object).sort()).to.deep.equal([
      '[REDACTED]',
      'x [REDACTED]',
    ]);
  });

  it('redacts whole values of secret-named fields, but not placeholders', () => {
    const result = sanitize({
      password: 'correct horse battery staple',
      api_key: '${API_KEY}',
      config: { clientSecret: 'abc12345' },
      token_budget: 'plenty of room',
    });
    expect(result.cleaned_value).to.deep.equal({
      password: '[REDACTED]',
      api_key: '${API_KEY}',
      config: { clientSecret: '[REDACTED]' },
      token_budget: 'plenty of room',
    });
    expect(result.findings.map((f) => f.location)).to.have.members([
      '$.password',
      '$.config.clientSecret',
    ]);
  });

  it('ranks mixed-severity findings critical > high > medium > low and blocks on the worst', () => {
    const result = sanitize({
      a: 'ip 8.8.8.8',
      b: 'mail a.b@example.com',
      c: `key ${AKIA}`,
      d: '-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----',
    });
    expect(result.findings.map((f) => f.severity)).to.deep.equal([
      'critical',
      'high',
      'medium',
      'low',
    ]);
    expect(result.classification).to.equal('blocked');
    expect(result.cleaned_content).to.equal(null);
    expect(result.cleaned_value).to.equal(undefined);
  });

  it('prefers requires_approval over redacted and still applies redactions', () => {
    const result = sanitize({ a: `Is this a jailbreak? My key is ${AKIA}` });
    expect(result.classification).to.equal('requires_approval');
    expect(result.cleaned_value).to.deep.equal({ a: 'Is this a jailbreak? My key is [REDACTED]' });
  });

  it('recognises secret-named fields however the name is separated or cased', () => {
    const names = [
      'PASS_WORD',
      'x-api-key',
      'Api.Key',
      'p_a-s.s_w-o.r_d',
      'client__secret',
      'AUTH-TOKEN',
    ];
    for (const name of names) {
      const result = sanitize({ [name]: 'hunter2hunter2' });
      expect(result.cleaned_value, name).to.deep.equal({ [name]: '[REDACTED]' });
    }
    // Lower-casing turns the Kelvin sign into an ASCII k: still a secret name.
    expect(sanitize({ 'api\u212Aey': 'hunter2hunter2' }).findings).to.have.length(1);
    for (const name of ['tokens', 'monkey_count', 'passage', 'id', 'yaml_text']) {
      const result = sanitize({ [name]: 'plain words here' });
      expect(result.findings, name).to.deep.equal([]);
    }
  });

  it('finds the same things in a string whether it is sanitized alone or in a large body', () => {
    // Gates run once over the whole body; no string may lose or borrow a finding there.
    const texts = [...MUST_CATCH.map((c) => c.text), ...MUST_STAY_CLEAN];
    const alone = texts.map((text) =>
      sanitize({ v: text }).findings.map((f) => `${f.category}/${f.pattern_name}`),
    );
    const together = sanitize({ v: texts });
    const byIndex = texts.map(() => [] as string[]);
    for (const f of together.findings) {
      const index = Number(/^\$\.v\[(\d+)\]$/.exec(f.location)?.[1]);
      byIndex[index]?.push(`${f.category}/${f.pattern_name}`);
    }
    for (let i = 0; i < texts.length; i += 1) {
      expect(byIndex[i]?.sort(), JSON.stringify(texts[i]).slice(0, 60)).to.deep.equal(
        alone[i]?.sort(),
      );
    }
    const cleaned = together.cleaned_value as { v: string[] };
    texts.forEach((text, i) => {
      const single = sanitize({ v: text }).cleaned_value as { v: string } | undefined;
      if (single !== undefined && together.classification !== 'blocked') {
        expect(cleaned.v[i]).to.equal(single.v);
      }
    });
  });

  it('hashes the original input with SHA-256 (the raw text when given)', () => {
    const value = { a: `key ${AKIA}` };
    const raw = JSON.stringify(value);
    const expected = createHash('sha256').update(raw).digest('hex');
    expect(sanitize(value).input_hash).to.equal(expected);
    expect(sanitize(value, { raw: ` ${raw}` }).input_hash).to.equal(
      createHash('sha256').update(` ${raw}`).digest('hex'),
    );
    // Raw bytes as received hash to the same digest as their text.
    const bytes = Buffer.from(`{"a":"Grüße ${AKIA}"}`);
    expect(sanitize({}, { raw: bytes }).input_hash).to.equal(
      createHash('sha256').update(bytes.toString('utf8')).digest('hex'),
    );
  });

  it('returns a frozen result whose findings never carry matched text', () => {
    const result = sanitize({ a: `key ${AKIA}` });
    expect(Object.isFrozen(result)).to.equal(true);
    expect(Object.isFrozen(result.findings)).to.equal(true);
    expect(JSON.stringify(result.findings)).not.to.include(AKIA);
    expect(result.cleaned_content).to.equal('{"a":"key [REDACTED]"}');
    expect(result.processing_time_ms).to.be.a('number').and.at.least(0);
  });

  it('sanitizes a plain string input and keeps it a string', () => {
    const result = sanitize(`token ${AKIA}`);
    expect(result.cleaned_value).to.equal('token [REDACTED]');
    expect(result.cleaned_content).to.equal('token [REDACTED]');
    expect(result.findings[0]?.location).to.equal('$');
  });

  it('keeps a __proto__ key a plain property when rebuilding', () => {
    const input = JSON.parse(`{"__proto__": {"x": "${AKIA}"}, "y": 1}`) as object;
    const cleaned = sanitize(input).cleaned_value as Record<string, unknown>;
    expect(Object.getPrototypeOf(cleaned)).to.equal(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(cleaned, '__proto__')?.value).to.deep.equal({
      x: '[REDACTED]',
    });
  });

  it('refuses input nested deeper than MAX_DEPTH', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_DEPTH + 1; i += 1) deep = [deep];
    expect(() => sanitize(deep)).to.throw(SanitizerDepthError);
  });

  it('leaves numbers, booleans and null alone and reports clean', () => {
    const input = { n: 4111111111111111, b: true, z: null, list: [1, 2.5] };
    const result = sanitize(input);
    expect(result.classification).to.equal('clean');
    expect(result.cleaned_value).to.equal(input);
  });

  it('classifies an empty finding list as clean', () => {
    expect(classify([])).to.equal('clean');
  });
});
