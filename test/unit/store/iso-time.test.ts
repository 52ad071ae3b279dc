import { expect } from 'chai';
import fc from 'fast-check';
import { createIsoTime } from '../../../src/store/run-record.js';

describe('createIsoTime (the run records’ time formatter)', () => {
  it('formats like toISOString for any sequence of times, cache or not', () => {
    const ms = fc.oneof(
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }),
    );
    fc.assert(
      fc.property(fc.array(ms, { minLength: 1, maxLength: 50 }), (times) => {
        const iso = createIsoTime();
        for (const t of times) expect(iso(t)).to.equal(new Date(t).toISOString());
      }),
    );
  });

  it('keeps its cache per instance: one runtime’s times do not leak into another’s', () => {
    const a = createIsoTime();
    const b = createIsoTime();
    expect(a(1_700_000_000_123)).to.equal('2023-11-14T22:13:20.123Z');
    // b never saw that second; a's remembered prefix must not answer for it.
    expect(b(1_700_000_000_999)).to.equal('2023-11-14T22:13:20.999Z');
    expect(a(1_700_000_001_000)).to.equal('2023-11-14T22:13:21.000Z');
    expect(b(1_700_000_000_124)).to.equal('2023-11-14T22:13:20.124Z');
  });
});
