import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { RunSession } from '../../../src/engine/run-session.js';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime, WorkflowEvent } from '../../../src/engine/types.js';
import { createLogger } from '../../../src/log.js';
import { removeDir, tempDir } from '../../conformance/helpers.js';

const ECHO = 'name: echo\nsteps:\n  - { name: e, agent: tier0_echo, inputs: { v: 1 } }\n';

type Bounded = (record: { status: string }) => unknown;

describe('a fault while ending a run', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  const proto = RunSession.prototype as unknown as { bounded: Bounded };
  const realBounded = proto.bounded;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  beforeEach(async () => {
    dir = await tempDir('agentic-end-fault-');
    await mkdir(join(dir, 'wf'));
    await writeFile(join(dir, 'wf', 'echo.yaml'), ECHO);
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    proto.bounded = realBounded;
    process.off('unhandledRejection', onUnhandled);
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  for (const adapter of ['native', 'graph'] as const) {
    it(`ends the run as failed with one workflow_end, logged, never unhandled (${adapter})`, async () => {
      // Building the end record throws, as a bug in finish would.
      proto.bounded = function (this: unknown, record: { status: string }) {
        if (record.status !== 'running') throw new Error('record builder broke');
        return realBounded.call(this, record);
      };
      const logs: string[] = [];
      const sink = new PassThrough();
      sink.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
      runtime = createRuntime({
        runsDir: join(dir, 'runs'),
        workflowsDir: join(dir, 'wf'),
        defaultAdapter: adapter,
        persist: false,
        logger: createLogger({ destination: sink, level: 'error' }),
      });
      const events: WorkflowEvent[] = [];
      runtime.subscribe((event) => events.push(event));
      const handle = await runtime.start({ workflow: 'echo' });
      const record = await handle.done;
      // Give a rejection left unhandled the turn Node needs to report it.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));

      expect(record.status).to.equal('failed');
      expect(record.error).to.equal('run end failed: record builder broke');
      const ends = events.filter((event) => event.type === 'workflow_end');
      expect(ends).to.have.length(1);
      expect(ends[0]).to.include({
        status: 'failed',
        error: 'run end failed: record builder broke',
      });
      expect(logs.join('')).to.include('run end failed');
      expect(unhandled).to.deep.equal([]);
    });
  }
});
