import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { createSilentLogger } from '../../../src/log.js';
import { acquireOwnerLease, type OwnerInfo } from '../../../src/store/owner.js';
import { PROCESS_TOKEN } from '../../../src/store/process-token.js';
import { journalFileName } from '../../../src/store/run-journal.js';
import { startedRunRecord } from '../../../src/store/run-record.js';
import { recoverRunsDir } from '../../../src/store/startup-recovery.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { validateRecord } from '../../conformance/helpers.js';

const workflow = compileWorkflow({
  name: 'wf',
  steps: [
    { name: 'a', agent: 'tier0_echo' },
    { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
  ],
});
const START = Date.UTC(2025, 0, 2);

function running(runId: string, owner?: string): RunRecord {
  const record = startedRunRecord({
    runId,
    workflow,
    adapter: 'native',
    inputs: {},
    startTime: START,
    extra: {},
  });
  if (owner !== undefined) record.owner = owner;
  return record;
}

describe('start-up recovery (store/startup-recovery.ts)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-recovery-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const put = (name: string, value: unknown): Promise<void> =>
    writeFile(join(dir, name), typeof value === 'string' ? value : JSON.stringify(value));
  const read = async (name: string): Promise<RunRecord> =>
    JSON.parse(await readFile(join(dir, name), 'utf8')) as RunRecord;

  it('recovers only runs of gone owners, folding their journals, and cleans up after them', async () => {
    const lease = await acquireOwnerLease({ runsDir: dir, logger: createSilentLogger() });
    // A gone owner of this machine: an exited pid cannot be ours.
    const ownerFile = (await readdir(dir))[0]!;
    const gone: OwnerInfo = {
      ...(JSON.parse(await readFile(join(dir, ownerFile), 'utf8')) as OwnerInfo),
      id: 'dead-0123abcd-0',
      pid: 2 ** 22 + 7,
    };
    await put('.dead-0123abcd-0.owner', gone);
    await put('1_wf_live.json', running('live', lease.id));
    await put('2_wf_dead.json', running('dead', gone.id));
    await put(
      journalFileName('2_wf_dead.json'),
      `${JSON.stringify({ i: 0, step: { ...running('x').steps[0], status: 'success', output: { v: 1 } } })}\n` +
        `${JSON.stringify({ i: 1, started: '2025-01-02T00:00:01.000Z' })}\n{"i":1,"st`,
    );
    await put('3_wf_legacy.json', running('legacy'));
    await put('4_wf_done.json', { ...running('done'), status: 'success' });
    await put(journalFileName('4_wf_done.json'), '');
    await put(journalFileName('5_wf_gone.json'), '');
    await put(`.1_wf_live.json.${PROCESS_TOKEN}-3.tmp`, '');
    await put('.2_wf_dead.json.dead-0123abcd-w4.tmp', '');
    const seen: string[] = [];
    const report = await recoverRunsDir({
      runsDir: dir,
      self: lease.id,
      now: START + 5000,
      onRecord: (record, name) => seen.push(`${name}:${record.status}`),
    });
    expect(report).to.deep.include({
      runs: 4,
      journalsFolded: 1,
      journalsRemoved: 2,
      tempFilesRemoved: 1,
      ownersRemoved: 1,
      liveRuns: 1,
    });
    expect(report.recovered.sort()).to.deep.equal(['2_wf_dead.json', '3_wf_legacy.json']);
    expect(seen.sort()).to.deep.equal([
      '1_wf_live.json:running',
      '2_wf_dead.json:failed',
      '3_wf_legacy.json:failed',
      '4_wf_done.json:success',
    ]);
    expect(await read('1_wf_live.json')).to.deep.equal(running('live', lease.id));
    const dead = await read('2_wf_dead.json');
    expect(validateRecord(dead), JSON.stringify(validateRecord.errors)).to.equal(true);
    expect(dead).to.include({ status: 'failed', error: 'interrupted', success_rate: 50 });
    expect(dead.steps.map((s) => [s.status, s.output, s.error, s.start_time])).to.deep.equal([
      ['success', { v: 1 }, null, null],
      ['failed', null, 'interrupted', '2025-01-02T00:00:01.000Z'],
    ]);
    expect((await readdir(dir)).sort()).to.deep.equal(
      [
        `.${lease.id}.owner`,
        `.1_wf_live.json.${PROCESS_TOKEN}-3.tmp`,
        '1_wf_live.json',
        '2_wf_dead.json',
        '3_wf_legacy.json',
        '4_wf_done.json',
      ].sort(),
    );
    await lease.release();
  });
});
