import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../../src/engine/system-clock.js';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { createSilentLogger } from '../../../src/log.js';
import { writeFileAtomic } from '../../../src/files/atomic-write.js';
import {
  createRunWriter,
  RecordNotWrittenError,
  type RunWriter,
} from '../../../src/store/run-writer.js';
import type { FileWriter } from '../../../src/store/write-thread.js';

/** A file writer that fails with `code` while it is set, and reports each failure. */
class FaultyWriter {
  code: string | undefined;
  calls = 0;
  private failureWaiters: (() => void)[] = [];

  readonly write: FileWriter = async (path, data) => {
    this.calls++;
    if (this.code !== undefined) {
      const error = new Error(`${this.code}: simulated`) as NodeJS.ErrnoException;
      error.code = this.code;
      // Waiters run after the rejection has reached the queue.
      const waiters = this.failureWaiters;
      this.failureWaiters = [];
      setImmediate(() => waiters.forEach((wake) => wake()));
      throw error;
    }
    await writeFileAtomic(path, data);
  };

  /** Resolves after the next failure has been handled. */
  nextFailure(): Promise<void> {
    return new Promise((resolve) => this.failureWaiters.push(resolve));
  }
}

const record = (runId: string, status: RunRecord['status']): RunRecord =>
  ({ run_id: runId, status }) as unknown as RunRecord;

describe('createRunWriter', () => {
  let dir: string;
  let writer: RunWriter | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-run-writer-'));
  });
  afterEach(async () => {
    await writer?.close(0);
    writer = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const create = (writeFile: FileWriter, concurrency = 4): RunWriter =>
    (writer = createRunWriter({
      runsDir: dir,
      writeFile,
      concurrency,
      retryBaseMs: 1,
      retryMaxMs: 4,
      clock: systemClock,
      logger: createSilentLogger(),
    }));

  for (const code of ['ENOSPC', 'EROFS', 'EMFILE', 'ENOTDIR', 'EWORKER']) {
    it(`keeps a record that fails with ${code} queued, reports it, and writes it once the fault clears`, async () => {
      const faulty = new FaultyWriter();
      const queue = create(faulty.write);
      faulty.code = code;
      let written = false;
      const failed = faulty.nextFailure();
      const done = queue.write('r1', 'r1.json', record('r1', 'success'), true).then(() => {
        written = true;
      });
      await failed;
      await faulty.nextFailure(); // a retry failed too: still queued, never reported written
      expect(written).to.equal(false);
      expect(queue.status()).to.deep.equal({ pending: 1, failing: 1, lastError: code });
      expect(queue.unwritten('r1')).to.include({ filename: 'r1.json', error: code });
      faulty.code = undefined;
      await done;
      expect(JSON.parse(await readFile(join(dir, 'r1.json'), 'utf8'))).to.deep.equal(
        record('r1', 'success'),
      );
      expect(queue.status()).to.deep.equal({ pending: 0, failing: 0, lastError: undefined });
      expect(queue.unwritten('r1')).to.equal(undefined);
    });
  }

  it('rejects a write without retry at its first failure, leaving nothing queued', async () => {
    const faulty = new FaultyWriter();
    const queue = create(faulty.write);
    faulty.code = 'ENOSPC';
    const error = await queue.write('r1', 'r1.json', record('r1', 'running'), false).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(RecordNotWrittenError);
    expect((error as RecordNotWrittenError).code).to.equal('ENOSPC');
    expect(faulty.calls).to.equal(1);
    expect(queue.status()).to.deep.equal({ pending: 0, failing: 0, lastError: undefined });
  });

  it('has at most `concurrency` writes with the file system at once', async () => {
    let inFlight = 0;
    let most = 0;
    const counting: FileWriter = async (path, data) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await writeFileAtomic(path, data);
      } finally {
        inFlight--;
      }
    };
    const queue = create(counting, 3);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        queue.write(`r${i}`, `r${i}.json`, record(`r${i}`, 'success'), true),
      ),
    );
    expect(most).to.equal(3);
    expect((await readdir(dir)).length).to.equal(200);
  });

  it('close abandons a record that still fails after the drain deadline (rejects, never resolves)', async () => {
    const faulty = new FaultyWriter();
    const queue = create(faulty.write);
    faulty.code = 'ENOSPC';
    const failed = faulty.nextFailure();
    const result = queue.write('r1', 'r1.json', record('r1', 'success'), true).then(
      () => 'written',
      (e: unknown) => e,
    );
    await failed;
    await queue.close(0);
    const error = await result;
    expect(error).to.be.instanceOf(RecordNotWrittenError);
    expect((error as Error).message).to.equal('run record not written (ENOSPC)');
    expect(queue.status().pending).to.equal(0);
  });

  it('close drains queued records that can be written before the deadline', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated: FileWriter = async (path, data) => {
      await gate;
      await writeFileAtomic(path, data);
    };
    const queue = create(gated, 2);
    const writes = Array.from({ length: 20 }, (_, i) =>
      queue.write(`r${i}`, `r${i}.json`, record(`r${i}`, 'success'), true),
    );
    const closed = queue.close(60_000);
    release();
    await closed;
    await Promise.all(writes);
    expect((await readdir(dir)).length).to.equal(20);
    expect(queue.abandoned()).to.equal(0);
  });

  it('close abandons, at the deadline, the records that had no turn yet, and any written after it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated: FileWriter = async (path, data) => {
      await gate;
      await writeFileAtomic(path, data);
    };
    const queue = create(gated, 2);
    const settled = (runId: string): Promise<unknown> =>
      queue.write(runId, `${runId}.json`, record(runId, 'success'), true).then(
        () => 'written',
        (e: unknown) => e,
      );
    const writes = Array.from({ length: 20 }, (_, i) => settled(`r${i}`));
    const closed = queue.close(0);
    // The deadline passes while the first two are with the file system.
    const early = await writes[19];
    expect(early).to.be.instanceOf(RecordNotWrittenError);
    expect((early as Error).message).to.equal('run record not written (shutdown grace passed)');
    const late = await settled('late');
    expect(late).to.be.instanceOf(RecordNotWrittenError);
    release();
    await closed;
    const outcomes = await Promise.all(writes);
    expect(outcomes.slice(0, 2)).to.deep.equal(['written', 'written']);
    expect(outcomes.slice(2).every((o) => o instanceof RecordNotWrittenError)).to.equal(true);
    expect((await readdir(dir)).sort()).to.deep.equal(['r0.json', 'r1.json']);
    expect(queue.abandoned()).to.equal(19);
    expect(queue.status().pending).to.equal(0);
  });
});
