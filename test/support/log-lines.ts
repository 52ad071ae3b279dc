import { Writable } from 'node:stream';

/** A destination for a JSON logger that keeps each line parsed, in order. */
export function logLines(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}
