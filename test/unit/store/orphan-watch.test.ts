import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { createSilentLogger } from '../../../src/log.js';
import { goneOwners, startOrphanWatch } from '../../../src/store/orphan-watch.js';
import { acquireOwnerLease, type OwnerInfo, type OwnerLease } from '../../../src/store/owner.js';
import { journalFileName } from '../../../src/store/run-journal.js';
import { startedRunRecord } from '../../../src/store/run-record.js';
import { recoverRunsDir } from '../../../src/store/startup-recovery.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';

const workflow = compileWorkflow({ name: 'wf', steps: [{ name: 'a', agent: 'tier0_echo' }] });

function running(runId: string, owner: string): RunRecord {
  const record = startedRunRecord({
    runId,
    workflow,
    adapter: 'native',
    inputs: {},
    startTime: Date.UTC(2025, 0, 2),
    extra: {},
  });
  record.owner = owner;
  return record;
}

describe('orphan watch (store/orphan-watch.ts)', () => {
  let dir: string;
  let lease: OwnerLease;
  let own: OwnerInfo;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-orphans-'));
    lease = await acquireOwnerLease({ runsDir: dir, logger: createSilentLogger() });
    own = JSON.parse(await readFile(join(dir, `.${lease.id}.owner`), 'utf8')) as OwnerInfo;
  });
  afterEach(async () => {
    await lease.release();
    await rm(dir, { recursive: true, force: true });
  });

  const put = (name: string, value: unknown): Promise<void> =>
    writeFile(join(dir, name), JSON.stringify(value));
  const status = async (name: string): Promise<string> => {
    const record = JSON.parse(await readFile(join(dir, name), 'utf8')) as RunRecord;
    return `${record.status}${record.error === null ? '' : `: ${record.error}`}`;
  };

  /** Owners: one whose pid exited, one alive but with a lapsed lease, one alive and fresh. */
  async function owners(): Promise<void> {
    await put('.exited-0123abcd-0.owner', { ...own, id: 'exited-0123abcd-0', pid: 2 ** 22 + 7 });
    await put('.stale-0123abcd-1.owner', { ...own, id: 'stale-0123abcd-1', leaseMs: 1000 });
    const old = new Date(Date.now() - 5000);
    await utimes(join(dir, '.stale-0123abcd-1.owner'), old, old);
    await put('.fresh-0123abcd-2.owner', { ...own, id: 'fresh-0123abcd-2' });
  }

  it('finds the owners that are gone: pid exited, or lease not refreshed in time', async () => {
    await owners();
    expect([...(await goneOwners(dir, lease.id))].sort()).to.deep.equal([
      'exited-0123abcd-0',
      'stale-0123abcd-1',
    ]);
  });

  it('recovers only the runs of the owners it is given, and leaves ended runs to their owners', async () => {
    await owners();
    await put('1_wf_a.json', running('a', 'exited-0123abcd-0'));
    await put('2_wf_b.json', running('b', 'fresh-0123abcd-2'));
    await put('3_wf_c.json', running('c', lease.id));
    await put('4_wf_d.json', running('d', 'never-0123abcd-3'));
    await put('5_wf_e.json', { ...running('e', 'fresh-0123abcd-2'), status: 'success' });
    await writeFile(join(dir, journalFileName('5_wf_e.json')), '');
    const recovered: string[] = [];
    const report = await recoverRunsDir({
      runsDir: dir,
      self: lease.id,
      now: Date.now(),
      only: new Set(['exited-0123abcd-0']),
      onRecovered: (record, name) => recovered.push(`${name}:${record.status}`),
    });
    expect(report.recovered).to.deep.equal(['1_wf_a.json']);
    expect(recovered).to.deep.equal(['1_wf_a.json:failed']);
    expect(await status('1_wf_a.json')).to.equal('failed: interrupted');
    for (const name of ['2_wf_b.json', '3_wf_c.json', '4_wf_d.json']) {
      expect(await status(name)).to.equal('running');
    }
    const left = (await readdir(dir)).filter((n) => n.startsWith('.')).sort();
    expect(left).to.deep.equal(
      [
        `.${lease.id}.owner`,
        '.fresh-0123abcd-2.owner',
        '.stale-0123abcd-1.owner',
        journalFileName('5_wf_e.json'),
      ].sort(),
    );
  });

  it('looks every period and hands the gone owners over until stopped', async () => {
    const seen: string[][] = [];
    let found!: () => void;
    const twice = new Promise<void>((resolve) => (found = resolve));
    const watch = startOrphanWatch({
      runsDir: dir,
      self: lease.id,
      everyMs: 20,
      logger: createSilentLogger(),
      recover: (gone) => {
        seen.push([...gone].sort());
        if (seen.length === 2) found();
        return Promise.resolve();
      },
    });
    await put('.exited-0123abcd-0.owner', { ...own, id: 'exited-0123abcd-0', pid: 2 ** 22 + 7 });
    await twice;
    await watch.stop();
    expect(seen[0]).to.deep.equal(['exited-0123abcd-0']);
    expect(seen[1]).to.deep.equal(['exited-0123abcd-0']);
  });
});
