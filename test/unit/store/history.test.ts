import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../../src/engine/types.js';
import { createSilentLogger } from '../../../src/log.js';
import { createHistoryIndex } from '../../../src/store/history.js';

const DAY = 86_400_000;
const NOW = Date.parse('2025-06-30T12:00:00.000Z');

function record(n: number, overrides: Partial<RunRecord> = {}): RunRecord {
  const start = new Date(NOW - 1000 * (1000 - n)).toISOString();
  return {
    run_id: `run-${n}`,
    workflow_name: n % 2 === 0 ? 'even' : 'odd',
    adapter: 'native',
    status: 'success',
    inputs: {},
    steps: [
      {
        step_name: 's',
        status: 'success',
        agent: 'tier1_writer',
        tier: '1',
        model_used: 'placeholder',
        tokens_used: { input: 6, output: 4, total: 10 },
        duration_ms: 5,
        retry_count: 0,
        input: {},
        output: {},
        error: null,
        start_time: start,
        end_time: start,
        metadata: {},
      },
    ],
    final_output: {},
    success_rate: 100,
    total_duration_ms: 100,
    step_count: 1,
    failed_step_count: 0,
    start_time: start,
    end_time: start,
    error: null,
    extra: {},
    ...overrides,
  };
}
const file = (n: number): string => `${String(n).padStart(6, '0')}_x_run-${n}.json`;

describe('history index', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-history-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps only the newest windowSize summaries but counts every run in the summary', () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      windowSize: 5,
      now: () => NOW,
    });
    for (let n = 0; n < 20; n++) history.upsert(record(n), file(n));
    expect(history.size).to.equal(5);
    expect(history.list({ limit: 50 }).map((s) => s.run_id)).to.deep.equal([
      'run-19',
      'run-18',
      'run-17',
      'run-16',
      'run-15',
    ]);
    expect(history.summary()).to.deep.equal({
      total_runs: 20,
      success: 20,
      failed: 0,
      avg_duration_ms: 100,
      workflows: ['even', 'odd'],
      tokens_30d: 200,
      // These records hold tokens without a cost (files written before costs were): unknown.
      cost_30d: 0,
      cost_30d_unpriced_runs: 20,
    });
    expect(history.summary({ workflow: 'odd' })).to.include({ total_runs: 10, tokens_30d: 100 });
  });

  it('a run rewritten at its end replaces its start entry in list and totals', () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      now: () => NOW,
    });
    history.upsert(
      record(1, { status: 'running', total_duration_ms: null, end_time: null }),
      file(1),
    );
    expect(history.summary()).to.include({
      total_runs: 1,
      success: 0,
      failed: 0,
      avg_duration_ms: 0,
    });
    history.upsert(record(1, { status: 'failed', total_duration_ms: 40 }), file(1));
    expect(history.list()).to.have.length(1);
    expect(history.list()[0]).to.include({ status: 'failed', total_duration_ms: 40 });
    expect(history.summary()).to.include({
      total_runs: 1,
      success: 0,
      failed: 1,
      avg_duration_ms: 40,
    });
  });

  it('never evicts an active run from the window', () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      windowSize: 2,
      now: () => NOW,
    });
    history.upsert(record(0, { status: 'running' }), file(0));
    for (let n = 1; n < 6; n++) history.upsert(record(n), file(n));
    expect(history.list().map((s) => s.run_id)).to.include('run-0');
  });

  it('counts tokens of the last 30 days only', () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      now: () => NOW,
    });
    const old = new Date(NOW - 40 * DAY).toISOString();
    history.upsert(record(1, { start_time: old }), file(1));
    history.upsert(record(2), file(2));
    expect(history.summary().tokens_30d).to.equal(10);
  });

  it('sums tokens_used.total, and the integer tokens_used of older run files', () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      now: () => NOW,
    });
    history.upsert(record(1), file(1));
    const legacy = record(2);
    (legacy.steps[0] as { tokens_used: unknown }).tokens_used = 7;
    history.upsert(legacy, file(2));
    expect(history.summary().tokens_30d).to.equal(17);
  });

  it('loads run files, skips foreign files, and finds runs outside the window by id', async () => {
    for (let n = 0; n < 4; n++) await writeFile(join(dir, file(n)), JSON.stringify(record(n)));
    await writeFile(join(dir, 'notes.txt'), 'x');
    await writeFile(join(dir, 'broken.json'), '{');
    await writeFile(join(dir, '.hidden.json.tmp'), '{}');
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      windowSize: 2,
      now: () => NOW,
    });
    await history.load();
    expect(history.list().map((s) => s.run_id)).to.deep.equal(['run-3', 'run-2']);
    expect(history.summary().total_runs).to.equal(4);
    const old = await history.getByRunId('run-0');
    expect(old?.filename).to.equal(file(0));
    expect(old?.record.run_id).to.equal('run-0');
    expect(await history.getByFilename(file(1))).to.have.property('filename', file(1));
    expect(await history.getByRunId('missing')).to.equal(undefined);
    expect(await history.getByFilename('../etc.json')).to.equal(undefined);
    expect(await history.getByFilename('broken.json')).to.equal(undefined);
  });

  it('serves run files written with numeric tiers with string tiers, like new ones', async () => {
    const legacy = record(1);
    (legacy.steps[0] as unknown as { tier: number }).tier = 0;
    await writeFile(join(dir, file(1)), JSON.stringify(legacy));
    const history = createHistoryIndex({ runsDir: dir, logger: createSilentLogger() });
    await history.load();
    const found = await history.getByRunId('run-1');
    expect(found?.record.steps[0]?.tier).to.equal('0');
  });

  it('finds every indexed run id through its map and never lists the directory for an unknown one', async () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      windowSize: 2,
      now: () => NOW,
    });
    await history.load();
    expect(history.loaded).to.equal(true);
    for (let n = 0; n < 6; n++) {
      await writeFile(join(dir, file(n)), JSON.stringify(record(n)));
      history.upsert(record(n), file(n));
    }
    expect(history.size).to.equal(2);
    expect(history.runCount).to.equal(6);
    expect(history.hasRunId('run-0')).to.equal(true);
    expect((await history.getByRunId('run-0'))?.filename).to.equal(file(0));
    // A file the index was not told about (written behind its back): an id lookup is a map
    // lookup, not a directory listing, so it stays unknown; its file name still reads it.
    await writeFile(join(dir, file(7)), JSON.stringify(record(7)));
    expect(await history.getByRunId('run-7')).to.equal(undefined);
    expect((await history.getByFilename(file(7)))?.record.run_id).to.equal('run-7');
  });

  it('is not loaded until markLoaded, and a scanned record never replaces a newer write', async () => {
    const history = createHistoryIndex({ runsDir: dir, logger: createSilentLogger() });
    expect(history.loaded).to.equal(false);
    history.upsert(record(1, { status: 'failed' }), file(1));
    history.addScanned(record(1, { status: 'running' }), file(1));
    history.addScanned(record(2), file(2));
    history.markLoaded();
    await history.whenLoaded();
    expect(history.list().map((s) => [s.run_id, s.status])).to.deep.equal([
      ['run-2', 'success'],
      ['run-1', 'failed'],
    ]);
  });

  it('bounds the record cache in bytes: a record larger than the bound is read from its file', async () => {
    const history = createHistoryIndex({
      runsDir: dir,
      logger: createSilentLogger(),
      recordCacheBytes: 64 * 1024,
    });
    const small = record(1);
    const big = record(2, { final_output: { text: 'x'.repeat(100_000) } });
    history.upsert(small, file(1));
    history.upsert(big, file(2));
    // Neither file exists: only what the cache holds can be answered.
    expect((await history.getByRunId('run-1'))?.record).to.deep.equal(small);
    expect(await history.getByRunId('run-2')).to.equal(undefined);
  });
});
