import { expect } from 'chai';
import {
  boundRecord,
  isTruncationMarker,
  jsonSize,
  truncatedKeys,
  truncationMarker,
} from '../../../src/workflow/size-bounds.js';

describe('size bounds', () => {
  it('measures the compact JSON size of JSON-like values', () => {
    for (const value of [
      null,
      'text',
      12.5,
      true,
      false,
      [],
      {},
      [1, 'a', null],
      { a: { b: [1, 2, { c: 'd' }] }, e: '' },
    ]) {
      expect(jsonSize(value, 1e9), JSON.stringify(value)).to.equal(JSON.stringify(value).length);
    }
  });

  it('stops measuring past the cap: a value sharing one object 2^40 times is cheap to measure', () => {
    let value: unknown = { leaf: 'x'.repeat(100) };
    for (let i = 0; i < 40; i++) value = [value, value];
    expect(jsonSize(value, 10_000)).to.be.above(10_000).and.below(20_000);
  });

  it('measures data nested 200 000 deep without overflowing the stack', () => {
    let value: unknown = 1;
    for (let i = 0; i < 200_000; i++) value = [value];
    expect(jsonSize(value, 1e9)).to.equal(400_001);
  });

  it('returns a record within the bound unchanged', () => {
    const record = { a: 'x'.repeat(100) };
    expect(boundRecord(record, 1024)).to.equal(record);
  });

  it('replaces the biggest entries first, keeps the rest, and remembers what it replaced', () => {
    const record = { small: 'ok', big: 'b'.repeat(5000), bigger: ['c'.repeat(8000)] };
    const bounded = boundRecord(record, 6000);
    expect(bounded).to.deep.equal({
      small: 'ok',
      big: 'b'.repeat(5000),
      bigger: { __truncated__: true, bytes: 8004, preview: `["${'c'.repeat(198)}` },
    });
    expect(truncatedKeys(bounded)).to.deep.equal(['bigger']);
    expect(Object.keys(bounded)).to.deep.equal(['small', 'big', 'bigger']);
  });

  it('replaces the whole record when many small entries exceed the bound', () => {
    const record = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
    const bounded = boundRecord(record, 1024);
    expect(isTruncationMarker(bounded)).to.equal(true);
    expect(bounded).to.include({ preview: JSON.stringify(record).slice(0, 200) });
  });

  it('keeps a __proto__ key as data when rebuilding a record', () => {
    const record = JSON.parse(
      `{"__proto__": {"polluted": true}, "big": "${'x'.repeat(3000)}"}`,
    ) as Record<string, unknown>;
    const bounded = boundRecord(record, 1024);
    expect(Object.getPrototypeOf(bounded)).to.equal(Object.prototype);
    expect(Object.keys(bounded)).to.deep.equal(['__proto__', 'big']);
  });

  it('previews nested values as the start of their JSON', () => {
    expect(truncationMarker({ a: [1, { b: 'c' }], d: null }, 10).preview).to.equal(
      '{"a":[1,{"b":"c"}],"d":null}',
    );
  });
});
