import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepRecord } from '../../../src/generated/run-record.js';
import { createSilentLogger } from '../../../src/log.js';
import { appendFileSynced } from '../../../src/files/atomic-write.js';
import {
  createRunJournal,
  journalFileName,
  type JournalSource,
} from '../../../src/store/run-journal.js';
import { CLOCK_START } from '../../conformance/helpers.js';
import { TestClock } from '../../fixtures/test-clock.js';

function source(filename: string, startTime = 0): JournalSource {
  return {
    filename,
    startTime,
    stepRecord: (index) => ({ step_name: `s${index}`, status: 'success' }) as StepRecord,
  };
}

describe('run journals (store/run-journal.ts)', () => {
  let dir: string;
  let clock: TestClock;
  let appends: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-journal-'));
    clock = new TestClock(CLOCK_START);
    appends = [];
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function journal(bounds: { maxLineBytes?: number; maxFileBytes?: number } = {}) {
    return createRunJournal({
      ...bounds,
      runsDir: dir,
      commitMs: 50,
      clock,
      logger: createSilentLogger(),
      append: (path, data) => {
        appends.push(path);
        return appendFileSynced(path, data);
      },
    });
  }

  async function lines(filename: string): Promise<unknown[]> {
    const text = await readFile(join(dir, journalFileName(filename)), 'utf8');
    return text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
  }

  it("group-commits a map step's finished items with its step lines; the step's end drops them", async () => {
    const j = journal({ maxLineBytes: 200 });
    const a = source('a.json');
    j.stepStarted(a, 0, Date.UTC(2025, 0, 1));
    j.itemFinished(a, 0, { index: 1, attempts: 1, output: { v: 1 } });
    j.itemFinished(a, 0, { index: 0, attempts: 2, error: 'bad' });
    // Over the line bound: not journaled (the item runs again at a resume).
    j.itemFinished(a, 0, { index: 2, attempts: 1, output: { v: 'x'.repeat(300) } });
    j.stepStarted(a, 1, Date.UTC(2025, 0, 1));
    j.itemFinished(a, 1, { index: 0, attempts: 1, output: null });
    j.stepFinished(a, 1);
    clock.increment(50);
    await j.close();
    expect(appends).to.have.length(1);
    expect(await lines('a.json')).to.deep.equal([
      { i: 1, step: { step_name: 's1', status: 'success' } },
      { i: 0, started: '2025-01-01T00:00:00.000Z' },
      { i: 0, item: { index: 1, attempts: 1, output: { v: 1 } } },
      { i: 0, item: { index: 0, attempts: 2, error: 'bad' } },
    ]);
  });

  it('group-commits the step events of a commit window: one append per run', async () => {
    const j = journal();
    const a = source('a.json');
    const b = source('b.json');
    j.stepStarted(a, 0, Date.UTC(2025, 0, 1));
    j.stepFinished(a, 0);
    j.stepStarted(a, 1, Date.UTC(2025, 0, 1, 0, 0, 1));
    j.stepFinished(b, 0);
    j.stepFinished(b, 1);
    expect(appends).to.deep.equal([]);
    clock.increment(50);
    await j.close();
    expect(appends.sort()).to.deep.equal(
      [journalFileName('a.json'), journalFileName('b.json')].map((n) => join(dir, n)),
    );
    expect(await lines('a.json')).to.deep.equal([
      { i: 0, step: { step_name: 's0', status: 'success' } },
      { i: 1, started: '2025-01-01T00:00:01.000Z' },
    ]);
    expect(await lines('b.json')).to.deep.equal([
      { i: 0, step: { step_name: 's0', status: 'success' } },
      { i: 1, step: { step_name: 's1', status: 'success' } },
    ]);
  });

  it('commits a run only once it is older than the commit delay', async () => {
    const j = journal();
    j.stepFinished(source('old.json', clock.now()), 0);
    clock.increment(30);
    const young = source('young.json', clock.now());
    j.stepFinished(young, 0);
    clock.increment(20); // the commit: the young run is 20 ms old
    await Promise.resolve();
    expect(appends).to.deep.equal([join(dir, journalFileName('old.json'))]);
    clock.increment(50);
    await j.close();
    expect(appends).to.deep.equal(
      ['old.json', 'young.json'].map((name) => join(dir, journalFileName(name))),
    );
  });

  it('writes nothing for a run that ends before its commit', async () => {
    const j = journal();
    const a = source('a.json');
    j.stepFinished(a, 0);
    j.runEnding(a);
    clock.increment(50);
    await j.runEnded(a);
    await j.close();
    expect(appends).to.deep.equal([]);
  });

  it('flush: commits the given runs now, however young (runs left at shutdown), with their attempt numbers', async () => {
    const j = journal();
    const young = source('young.json', clock.now());
    const other = source('other.json', clock.now());
    j.stepFinished(young, 0);
    j.stepStarted(young, 1, Date.UTC(2025, 0, 1), 2);
    j.stepFinished(other, 0);
    await j.flush([young]);
    expect(appends).to.deep.equal([join(dir, journalFileName('young.json'))]);
    expect(await lines('young.json')).to.deep.equal([
      { i: 0, step: { step_name: 's0', status: 'success' } },
      { i: 1, started: '2025-01-01T00:00:00.000Z', a: 2 },
    ]);
    await j.close();
  });

  it('discard: removes a journal an earlier process left (a resumed run)', async () => {
    const j = journal();
    const a = source('a.json');
    j.stepFinished(a, 0);
    clock.increment(50);
    await j.flush([]);
    await j.close();
    expect(await readdir(dir)).to.deep.equal([journalFileName('a.json')]);
    await journal().discard(a);
    expect(await readdir(dir)).to.deep.equal([]);
  });

  it('removes the journal once the end record is written', async () => {
    const j = journal();
    const a = source('a.json');
    j.stepFinished(a, 0);
    clock.increment(50);
    j.runEnding(a);
    await j.runEnded(a);
    expect(await readdir(dir)).to.deep.equal([]);
    await j.close();
  });

  it('keeps each line within maxLineBytes with truncation markers, and stops the journal at maxFileBytes with a full line', async () => {
    const j = journal({ maxLineBytes: 4096, maxFileBytes: 8192 });
    const big: JournalSource = {
      filename: 'big.json',
      startTime: 0,
      stepRecord: (index) =>
        ({
          step_name: `s${index}`,
          status: 'success',
          input: { x: 'i'.repeat(3000) },
          output: { x: 'o'.repeat(3000) },
          error: null,
        }) as unknown as StepRecord,
    };
    for (let i = 0; i < 3; i++) j.stepFinished(big, i);
    clock.increment(50);
    await Promise.resolve();
    for (let i = 3; i < 40; i++) j.stepFinished(big, i);
    clock.increment(50);
    await j.close();
    const text = await readFile(join(dir, journalFileName('big.json')), 'utf8');
    expect(text.length).to.be.at.most(8192);
    const all = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of text.trim().split('\n')) expect(line.length).to.be.at.most(4096);
    const first = all[0] as { i: number; step: { input: unknown; output: unknown } };
    expect(first.step.input).to.deep.include({ __truncated__: true, bytes: 3008 });
    expect(first.step.output).to.deep.include({ __truncated__: true, bytes: 3008 });
    expect(all.at(-1)).to.deep.equal({
      full: true,
      bytes: text.length - `${JSON.stringify(all.at(-1))}\n`.length,
    });
    expect(all.length).to.be.below(40);
  });
});
