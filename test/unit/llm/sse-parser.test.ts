import { expect } from 'chai';
import { createSseParser, type SseEvent } from '../../../src/llm/sse-parser.js';

function parseInPieces(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const parser = createSseParser();
  const events: SseEvent[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...parser.push(bytes.subarray(start, cut)));
    start = cut;
  }
  events.push(...parser.end());
  return events;
}

describe('createSseParser', () => {
  const text =
    ': comment\r\nevent: delta\r\ndata: {"t":"héllo 👋"}\r\n\r\ndata: line one\ndata: line two\n\nid: 7\rretry: 10\rdata:no-space\r\r';
  const bytes = new TextEncoder().encode(text);
  const expected: SseEvent[] = [
    { event: 'delta', data: '{"t":"héllo 👋"}' },
    { event: 'message', data: 'line one\nline two' },
    { event: 'message', data: 'no-space' },
  ];

  it('gives the same events for every split of the stream into two and three pieces', () => {
    for (let a = 0; a <= bytes.length; a++) {
      expect(parseInPieces(bytes, [a]), `cut at ${a}`).to.deep.equal(expected);
    }
    for (let a = 0; a <= bytes.length; a += 3) {
      for (let b = a; b <= bytes.length; b += 5) {
        expect(parseInPieces(bytes, [a, b]), `cuts ${a},${b}`).to.deep.equal(expected);
      }
    }
  });

  it('parses a stream fed one byte at a time (UTF-8 and CRLF split everywhere)', () => {
    const cuts = Array.from({ length: bytes.length }, (_, i) => i);
    expect(parseInPieces(bytes, cuts)).to.deep.equal(expected);
  });

  it('dispatches an event left without its blank line at the end of the stream', () => {
    const parser = createSseParser();
    expect(parser.push('data: [DONE]')).to.deep.equal([]);
    expect(parser.end()).to.deep.equal([{ event: 'message', data: '[DONE]' }]);
  });

  it('ignores events without data and fields it does not know', () => {
    const parser = createSseParser();
    expect(parser.push('event: ping\n\nfoo: bar\ndata: x\n\n')).to.deep.equal([
      { event: 'message', data: 'x' },
    ]);
  });
});
