import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { createSilentLogger } from '../../../src/log.js';
import { createHistoryIndex, type HistoryIndex } from '../../../src/store/history.js';
import { createRetention, stampOf } from '../../../src/store/retention.js';
import { journalFileName } from '../../../src/store/run-journal.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 30, 12);

function name(daysAgo: number, id: string): string {
  const stamp = new Date(NOW - daysAgo * DAY).toISOString().replace(/[-:.]/g, '');
  return `${stamp}_wf_${id}.json`;
}

function record(id: string, daysAgo: number, status: RunRecord['status']): RunRecord {
  const start = new Date(NOW - daysAgo * DAY).toISOString();
  return {
    run_id: id,
    workflow_name: 'wf',
    adapter: 'native',
    status,
    inputs: {},
    steps: [],
    final_output: null,
    success_rate: 100,
    total_duration_ms: null,
    step_count: 0,
    failed_step_count: 0,
    start_time: start,
    end_time: null,
    error: null,
    extra: {},
  };
}

describe('run retention (store/retention.ts)', () => {
  let dir: string;
  let history: HistoryIndex;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-retention-'));
    history = createHistoryIndex({ runsDir: dir, logger: createSilentLogger(), now: () => NOW });
    const runs: [string, number, RunRecord['status']][] = [
      ['a', 40, 'success'],
      ['b', 35, 'running'],
      ['c', 20, 'failed'],
      ['d', 10, 'success'],
      ['e', 1, 'success'],
    ];
    for (const [id, days, status] of runs) {
      await writeFile(join(dir, name(days, id)), JSON.stringify(record(id, days, status)));
      history.upsert(record(id, days, status), name(days, id));
    }
    await writeFile(join(dir, journalFileName(name(40, 'a'))), '');
    history.markLoaded();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const files = async (): Promise<string[]> => (await readdir(dir)).sort();

  it('reads the start time from the file name', () => {
    expect(stampOf(name(0, 'x'))).to.equal(NOW);
    expect(stampOf('notes.json')).to.equal(undefined);
  });

  it('removes runs older than the days limit, never a running one, with their journals', async () => {
    const retention = createRetention({
      runsDir: dir,
      history,
      isActive: () => false,
      days: 30,
      max: 0,
      logger: createSilentLogger(),
      now: () => NOW,
    });
    expect(await retention.prune()).to.equal(1);
    await retention.stop();
    expect(await files()).to.deep.equal(
      [name(35, 'b'), name(20, 'c'), name(10, 'd'), name(1, 'e')].sort(),
    );
    expect(history.hasRunId('a')).to.equal(false);
    expect(history.summary().total_runs).to.equal(4);
  });

  it('keeps the newest max runs, skipping runs active in this process', async () => {
    const retention = createRetention({
      runsDir: dir,
      history,
      isActive: (id) => id === 'c',
      days: 0,
      max: 2,
      logger: createSilentLogger(),
      now: () => NOW,
    });
    expect(await retention.prune()).to.equal(1);
    await retention.stop();
    expect(await files()).to.deep.equal(
      [name(35, 'b'), name(20, 'c'), name(10, 'd'), name(1, 'e')].sort(),
    );
  });

  it('does nothing with both limits off', async () => {
    const retention = createRetention({
      runsDir: dir,
      history,
      isActive: () => false,
      days: 0,
      max: 0,
      logger: createSilentLogger(),
    });
    expect(await retention.prune()).to.equal(0);
    await retention.stop();
    expect(await files()).to.have.length(6);
  });
});
