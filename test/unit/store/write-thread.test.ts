import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRunFile } from '../../../src/store/run-files.js';
import { writeFileAtomicOffThread, writeThreadStatus } from '../../../src/store/write-thread.js';
import type { RunRecord } from '../../../src/generated/run-record.js';

describe('writeFileAtomicOffThread', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-write-thread-'));
  });
  afterEach(async () => {
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
    expect(writeThreadStatus()).to.equal('worker');
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
    await writeRunFile(runsDir, 'one.json', record);
    await rm(runsDir, { recursive: true });
    await writeRunFile(runsDir, 'two.json', record);
    const text = await readFile(join(runsDir, 'two.json'), 'utf8');
    expect(JSON.parse(text)).to.deep.equal(record);
    expect(text.endsWith('\n')).to.equal(true);
  });
});
