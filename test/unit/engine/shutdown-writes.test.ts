import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { Runtime } from '../../../src/engine/types.js';
import type { WorkflowEvent } from '../../../src/generated/events.js';
import { writeFileAtomic } from '../../../src/files/atomic-write.js';
import type { FileWriter } from '../../../src/store/write-thread.js';

const isEnd = (data: string): boolean => !data.includes('"status": "running"');

describe('runtime shutdown with queued run records', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-shutdown-writes-'));
  });
  afterEach(async () => {
    await runtime?.shutdown({ graceMs: 0 });
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('drains 300 pending end records with at most writeConcurrency writes at once, all on disk as success', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    let inFlight = 0;
    let most = 0;
    const writer: FileWriter = async (path, data) => {
      if (!isEnd(data)) return writeFileAtomic(path, data);
      inFlight++;
      most = Math.max(most, inFlight);
      held++;
      try {
        await gate;
        await writeFileAtomic(path, data);
      } finally {
        inFlight--;
      }
    };
    const rt = (runtime = createRuntime({
      runsDir: dir,
      writeFile: writer,
      writeConcurrency: 4,
      defaultAdapter: 'native',
      maxActiveRuns: 300,
    }));
    const handles = await Promise.all(
      Array.from({ length: 300 }, () => rt.start({ workflow: 'test_deterministic' })),
    );
    // Every run has ended its steps and waits on its end record: 4 with the file system, the rest queued.
    while (rt.writes().pending < 300) await new Promise<void>((r) => setImmediate(r));
    expect(held).to.equal(4);
    // Runs waiting on their end record count as active: the grace covers their writes.
    const stopped = rt.shutdown({ graceMs: 60_000 });
    release();
    await stopped;
    expect(most).to.equal(4);
    const records = await Promise.all(handles.map((h) => h.done));
    expect(new Set(records.map((r) => r.status))).to.deep.equal(new Set(['success']));
    // The run files (beside them: `.workflows`, the pinned workflow copy).
    const files = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    expect(files).to.have.length(300);
    const statuses = await Promise.all(
      files.map(
        async (name) =>
          (JSON.parse(await readFile(join(dir, name), 'utf8')) as { status: string }).status,
      ),
    );
    expect(new Set(statuses)).to.deep.equal(new Set(['success']));
  });

  it('abandons records still failing when the grace ends: their runs end failed, never success', async () => {
    const writer: FileWriter = (path, data) => {
      if (!isEnd(data)) return writeFileAtomic(path, data);
      const error = new Error('ENOSPC: simulated') as NodeJS.ErrnoException;
      error.code = 'ENOSPC';
      return Promise.reject(error);
    };
    const rt = (runtime = createRuntime({
      runsDir: dir,
      writeFile: writer,
      writeRetryMaxMs: 10,
    }));
    const events: WorkflowEvent[] = [];
    rt.subscribe((event) => events.push(event));
    const handle = await rt.start({ workflow: 'test_deterministic', runId: 'lost-1' });
    while (rt.writes().failing < 1) await new Promise<void>((r) => setImmediate(r));
    await rt.shutdown({ graceMs: 0 });
    const record = await handle.done;
    expect(record).to.include({ status: 'failed', error: 'run record not written (ENOSPC)' });
    const end = events.find((e) => e.type === 'workflow_end');
    expect(end).to.include({ status: 'failed', error: 'run record not written (ENOSPC)' });
    // The file keeps the start record: a restart marks it interrupted. The owner file stays too,
    // so that any process's scan counts this owner gone once its process is.
    const names = await readdir(dir);
    expect(names.filter((n) => n.endsWith('.owner'))).to.have.length(1);
    const file = names.find((n) => n.endsWith('.json'));
    const onDisk = JSON.parse(await readFile(join(dir, file!), 'utf8')) as { status: string };
    expect(onDisk.status).to.equal('running');
  });
});
