import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRunFile } from '../../../src/store/run-files.js';
import { writeFileAtomic } from '../../../src/files/atomic-write.js';
import { packageRoot } from '../../../src/config/index.js';
import { WORKER_DIED, WriteThread, type WorkerDeath } from '../../../src/store/write-thread.js';
import type { RunRecord } from '../../../src/generated/run-record.js';

describe('WriteThread.write (atomic writes off the main thread)', () => {
  let dir: string;
  let thread: WriteThread;
  const writeFileAtomicOffThread = (path: string, data: string) => thread.write(path, data);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-write-thread-'));
    thread = new WriteThread();
  });
  afterEach(async () => {
    await thread.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes files in request order (the last write to a path wins) and leaves no temp files', async () => {
    const path = join(dir, 'a.json');
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => writeFileAtomicOffThread(path, `{"n":${i}}`)),
    );
    expect(await readFile(path, 'utf8')).to.equal('{"n":49}');
    expect(await readdir(dir)).to.deep.equal(['a.json']);
    // Written by the worker thread, not by the async fallback.
    expect(thread.status()).to.equal('worker');
  });

  it('rejects with the errno code when the directory does not exist', async () => {
    const error = await writeFileAtomicOffThread(join(dir, 'missing', 'a.json'), 'x').then(
      () => undefined,
      (e: unknown) => e as NodeJS.ErrnoException,
    );
    expect(error?.code).to.equal('ENOENT');
  });

  it('writeRunFile creates the runs dir again when it was removed between writes', async () => {
    const runsDir = join(dir, 'runs');
    const record = { run_id: 'r1', status: 'running' } as unknown as RunRecord;
    await writeRunFile(runsDir, 'one.json', record, writeFileAtomicOffThread);
    await rm(runsDir, { recursive: true });
    await writeRunFile(runsDir, 'two.json', record, writeFileAtomicOffThread);
    const text = await readFile(join(runsDir, 'two.json'), 'utf8');
    expect(JSON.parse(text)).to.deep.equal(record);
    expect(text.endsWith('\n')).to.equal(true);
  });

  it("writeRunFile's directory cache is the caller's, not the process's", async () => {
    const runsDir = join(dir, 'runs');
    const record = { run_id: 'r1', status: 'running' } as unknown as RunRecord;
    const first = new Set<string>();
    await writeRunFile(runsDir, 'one.json', record, writeFileAtomic, first);
    expect([...first]).to.deep.equal([runsDir]);
    await rm(runsDir, { recursive: true });
    // Another caller (another runtime) has made no directory yet: it makes it before writing,
    // rather than failing a first write on the first caller's say-so.
    const writes: string[] = [];
    const counting = (path: string, data: string): Promise<void> => {
      writes.push(path);
      return writeFileAtomic(path, data);
    };
    await writeRunFile(runsDir, 'two.json', record, counting, new Set());
    expect(writes).to.deep.equal([join(runsDir, 'two.json')]);
  });
});

describe('WriteThread', () => {
  let dir: string;
  let thread: WriteThread | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-write-thread-'));
  });
  afterEach(async () => {
    await thread?.close();
    thread = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** Enough writes in one message (40 MB) to take a worker with a 16 MiB heap over its limit. */
  const manyWrites = (t: WriteThread, count: number): Promise<unknown>[] =>
    Array.from({ length: count }, (_, i) =>
      t.write(join(dir, `f${i % 50}.json`), `${'y'.repeat(20_000)}${i}`).then(
        () => 'ok',
        (e: unknown) => (e as NodeJS.ErrnoException).code,
      ),
    );
  const tinyHeap = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 };

  it('a worker over its resource limit: its writes reject EWORKER, the death is reported, a new worker takes the next writes', async () => {
    thread = new WriteThread({
      resourceLimits: tinyHeap,
      maxBatch: 100_000,
      maxBatchChars: Number.MAX_SAFE_INTEGER,
    });
    const deaths: WorkerDeath[] = [];
    thread.onDeath((death) => deaths.push(death));
    const results = await Promise.all(manyWrites(thread, 2000));
    expect(new Set(results)).to.deep.equal(new Set([WORKER_DIED]));
    expect(deaths).to.have.length(1);
    expect(deaths[0]).to.include({ code: 'ERR_WORKER_OUT_OF_MEMORY', restarting: true });
    await thread.write(join(dir, 'after.json'), '{"ok":true}');
    expect(await readFile(join(dir, 'after.json'), 'utf8')).to.equal('{"ok":true}');
    expect(thread.status()).to.equal('worker');
    expect(thread.deathCount).to.equal(1);
  });

  it('bounded batches keep the same load within the worker limits (no death, every file written)', async () => {
    thread = new WriteThread({ resourceLimits: tinyHeap, maxBatch: 64 });
    const results = await Promise.all(manyWrites(thread, 2000));
    expect(new Set(results)).to.deep.equal(new Set(['ok']));
    expect(thread.deathCount).to.equal(0);
    expect((await readdir(dir)).length).to.equal(50);
  });

  it('batches are bounded in characters too: big writes (run records, journal appends near their bounds) never take the worker over its limit', async () => {
    // 20 writes of 3 MB: one message of 60 MB under the count bound alone.
    const t = (thread = new WriteThread({ resourceLimits: tinyHeap }));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.write(join(dir, `big${i % 2}.json`), `${'z'.repeat(3_000_000)}${i}`).then(
          () => 'ok',
          (e: unknown) => (e as NodeJS.ErrnoException).code,
        ),
      ),
    );
    expect(new Set(results)).to.deep.equal(new Set(['ok']));
    expect(t.deathCount).to.equal(0);
    expect((await readFile(join(dir, 'big1.json'), 'utf8')).endsWith('19')).to.equal(true);
  });

  it('a worker that keeps dying: reported each time, then writes fall back to async writes', async () => {
    thread = new WriteThread({
      workerPath: join(packageRoot, 'test', 'fixtures', 'workers', 'dying-write-worker.mjs'),
      maxRestarts: 3,
    });
    const deaths: WorkerDeath[] = [];
    thread.onDeath((death) => deaths.push(death));
    for (let i = 0; i < 3; i++) {
      const error = await thread.write(join(dir, 'a.json'), 'x').then(
        () => undefined,
        (e: unknown) => e as NodeJS.ErrnoException,
      );
      expect(error?.code).to.equal(WORKER_DIED);
    }
    expect(deaths.map((d) => [d.exitCode, d.consecutive, d.restarting])).to.deep.equal([
      [3, 1, true],
      [3, 2, true],
      [3, 3, false],
    ]);
    await thread.write(join(dir, 'a.json'), '{"n":1}');
    expect(await readFile(join(dir, 'a.json'), 'utf8')).to.equal('{"n":1}');
    expect(thread.status()).to.equal('fallback');
  });
});
