import { expect } from 'chai';
import { SimulatedClock } from 'xstate';
import { TokenCoalescer } from '../../../src/events/token-coalescer.js';

describe('TokenCoalescer', () => {
  it('sends the chunks of one interval as one delta per step, in order, flushing early past maxChars', () => {
    const clock = new SimulatedClock();
    const sent: [string, string][] = [];
    const coalescer = new TokenCoalescer({
      clock,
      intervalMs: 100,
      maxChars: 10,
      emit: (step, delta) => sent.push([step, delta]),
    });
    for (const piece of ['a', 'b', 'c']) coalescer.push('s1', piece);
    coalescer.push('s2', 'x');
    expect(sent).to.deep.equal([]);
    clock.increment(100);
    expect(sent).to.deep.equal([
      ['s1', 'abc'],
      ['s2', 'x'],
    ]);
    coalescer.push('s1', '0123456789');
    expect(sent[2]).to.deep.equal(['s1', '0123456789']);
    coalescer.push('s1', 'tail');
    coalescer.flush('s1');
    expect(sent[3]).to.deep.equal(['s1', 'tail']);
    coalescer.push('s2', 'end');
    coalescer.close();
    expect(sent[4]).to.deep.equal(['s2', 'end']);
    clock.increment(1000);
    expect(sent).to.have.length(5);
  });

  it('turns 1000 chunks within one interval into one event', () => {
    const clock = new SimulatedClock();
    let events = 0;
    const coalescer = new TokenCoalescer({ clock, intervalMs: 50, emit: () => events++ });
    for (let i = 0; i < 1000; i++) coalescer.push('s', 'tok ');
    clock.increment(50);
    expect(events).to.equal(1);
  });
});
