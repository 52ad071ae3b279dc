import { expect } from 'chai';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime } from '../../../src/engine/types.js';
import { createLogger } from '../../../src/log.js';
import { logLines } from '../../support/log-lines.js';
import { internalsOf } from '../../../src/engine/runtime-internals.js';

describe('runtime and the write worker', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-worker-death-'));
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 0 });
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('logs the death of the write worker, and later runs are written by a new one', async () => {
    const { stream: sink, lines } = logLines();
    const rt = (runtime = createRuntime({
      runsDir: dir,
      logger: createLogger({ format: 'json', destination: sink }),
    }));
    expect((await rt.run({ workflow: 'test_deterministic' })).status).to.equal('success');
    const thread = internalsOf(rt)!.writeThread!;
    const deaths = thread.deathCount;
    await thread.close(); // the worker is terminated, as if killed
    expect(thread.deathCount).to.equal(deaths + 1);
    const logged = lines.filter((line) => line.level === 50);
    expect(logged.map((line) => line.msg)).to.deep.equal([
      'run-file write worker died; its writes are retried on a new worker',
    ]);
    expect((await rt.run({ workflow: 'test_deterministic' })).status).to.equal('success');
    expect((await readdir(dir)).filter((name) => name.endsWith('.json'))).to.have.length(2);
    expect(thread.status()).to.equal('worker');
  });

  it('owns its write thread: another runtime has its own, and shutdown ends it without a death', async () => {
    const { stream: sink, lines } = logLines();
    const logger = createLogger({ format: 'json', destination: sink });
    const a = (runtime = createRuntime({ runsDir: join(dir, 'a'), logger }));
    const b = createRuntime({ runsDir: join(dir, 'b'), logger });
    try {
      await Promise.all([
        a.run({ workflow: 'test_deterministic' }),
        b.run({ workflow: 'test_deterministic' }),
      ]);
      const threadA = internalsOf(a)!.writeThread!;
      expect(threadA).not.to.equal(internalsOf(b)!.writeThread);
      expect(threadA.status()).to.equal('worker');
      // Killing one runtime's worker is no event of the other's.
      await threadA.close();
      expect(internalsOf(b)!.writeThread!.deathCount).to.equal(0);
    } finally {
      await b.shutdown({ graceMs: 0 });
    }
    expect(internalsOf(b)!.writeThread!.deathCount).to.equal(0);
    expect(lines.filter((line) => line.level === 50)).to.have.length(1);
  });
});
