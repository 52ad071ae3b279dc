import { expect } from 'chai';
import { RingBuffer } from '../../../src/events/ring-buffer.js';

describe('RingBuffer', () => {
  it('keeps entries oldest first until full', () => {
    const buffer = new RingBuffer<number>(3);
    expect(buffer.toArray()).to.deep.equal([]);
    expect(buffer.last()).to.equal(undefined);
    buffer.push(1);
    buffer.push(2);
    expect(buffer.toArray()).to.deep.equal([1, 2]);
    expect(buffer.size).to.equal(2);
    expect(buffer.last()).to.equal(2);
  });

  it('wraps at 500: the oldest entries are dropped, order is kept', () => {
    const buffer = new RingBuffer<number>(500);
    for (let i = 0; i < 1234; i += 1) buffer.push(i);
    const items = buffer.toArray();
    expect(items).to.have.length(500);
    expect(items[0]).to.equal(734);
    expect(items.at(-1)).to.equal(1233);
    expect(items.every((value, index) => value === 734 + index)).to.equal(true);
    expect(buffer.size).to.equal(500);
    expect(buffer.last()).to.equal(1233);
  });

  it('returns a copy that later pushes do not change', () => {
    const buffer = new RingBuffer<string>(2);
    buffer.push('a');
    const snapshot = buffer.toArray();
    buffer.push('b');
    buffer.push('c');
    expect(snapshot).to.deep.equal(['a']);
    expect(buffer.toArray()).to.deep.equal(['b', 'c']);
  });

  it('clears', () => {
    const buffer = new RingBuffer<number>(2);
    buffer.push(1);
    buffer.push(2);
    buffer.push(3);
    buffer.clear();
    expect(buffer.size).to.equal(0);
    expect(buffer.toArray()).to.deep.equal([]);
    buffer.push(4);
    expect(buffer.toArray()).to.deep.equal([4]);
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new RingBuffer(0)).to.throw(RangeError);
    expect(() => new RingBuffer(1.5)).to.throw(RangeError);
  });
});
