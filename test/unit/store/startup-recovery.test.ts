import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { createLogger, createSilentLogger } from '../../../src/log.js';
import { acquireOwnerLease, type OwnerInfo, type OwnerLease } from '../../../src/store/owner.js';
import { PROCESS_TOKEN } from '../../../src/files/process-token.js';
import { journalFileName } from '../../../src/store/run-journal.js';
import { startedRunRecord } from '../../../src/store/run-record.js';
import { recoverRunsDir } from '../../../src/store/startup-recovery.js';
import { finaliseInterruptedRun } from '../../../src/scale/run-finaliser.js';
import { writeFileAtomic } from '../../../src/files/atomic-write.js';
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

  /** This process's owner lease, and the owner file of a gone owner of this machine. */
  async function liveAndGoneOwners(): Promise<{ lease: OwnerLease; gone: OwnerInfo }> {
    const lease = await acquireOwnerLease({ runsDir: dir, logger: createSilentLogger() });
    const ownerFile = (await readdir(dir))[0]!;
    // An exited pid cannot be ours.
    const gone: OwnerInfo = {
      ...(JSON.parse(await readFile(join(dir, ownerFile), 'utf8')) as OwnerInfo),
      id: 'dead-0123abcd-0',
      pid: 2 ** 22 + 7,
    };
    await put('.dead-0123abcd-0.owner', gone);
    return { lease, gone };
  }

  it('recovers only runs of gone owners, folding their journals, and cleans up after them', async () => {
    const { lease, gone } = await liveAndGoneOwners();
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

  it("repairs a dead owner's run once when the orphan watch and the scale-out finaliser meet on it, keeping its journal's steps", async () => {
    const { lease, gone } = await liveAndGoneOwners();
    await put('2_wf_dead.json', running('dead', gone.id));
    await put(
      journalFileName('2_wf_dead.json'),
      `${JSON.stringify({ i: 0, step: { ...running('x').steps[0], status: 'success', output: { v: 1 } } })}\n`,
    );
    const writes: string[] = [];
    const writeFile = async (path: string, data: string): Promise<void> => {
      writes.push(path);
      await writeFileAtomic(path, data);
    };
    let claimed = true;
    const [, outcome] = await Promise.all([
      // The orphan watch of a worker, which found the dead owner on its tick...
      recoverRunsDir({
        runsDir: dir,
        self: lease.id,
        now: START + 5000,
        only: new Set([gone.id]),
        writeFile,
      }),
      // ...and its finaliser, woken by the dead worker's expired claim at the same moment.
      finaliseInterruptedRun({
        runId: 'dead',
        claims: {
          get: () => Promise.resolve(claimed ? { filename: '2_wf_dead.json' } : undefined),
          release: () => {
            const was = claimed;
            claimed = false;
            return Promise.resolve(was);
          },
        } as Parameters<typeof finaliseInterruptedRun>[0]['claims'],
        runsDir: dir,
        logger: createSilentLogger(),
        publish: () => undefined,
        recorded: () => undefined,
        recheckMs: 10,
        signal: new AbortController().signal,
        writeFile,
      }),
    ]);
    expect(outcome).to.equal('interrupted');
    // Before, both read the start record and wrote: the second without the journal's step.
    expect(writes.filter((path) => path.endsWith('2_wf_dead.json'))).to.have.length(1);
    const dead = await read('2_wf_dead.json');
    expect(dead.steps.map((s) => s.status)).to.deep.equal(['success', 'skipped']);
    await lease.release();
  });

  it('sets aside a journal over the record bound or unparsable, with one warn line each, and marks its run interrupted', async () => {
    const bound = 64 * 1024;
    const step = (i: number) => ({
      i,
      step: { ...running('x').steps[0], status: 'success', output: { v: 'y'.repeat(2000) } },
    });
    // Over the bound: 40 lines of ~2 KB (an unbounded journal, as the fault campaign left them).
    const huge = Array.from({ length: 40 }, () => `${JSON.stringify(step(0))}\n`).join('');
    expect(huge.length).to.be.above(bound);
    await put('1_wf_huge.json', running('huge', 'gone-0123abcd-0'));
    await put(journalFileName('1_wf_huge.json'), huge);
    // Unparsable: a bad line in the middle (only a last line may be partial).
    await put('2_wf_bad.json', running('bad', 'gone-0123abcd-0'));
    await put(journalFileName('2_wf_bad.json'), `not json\n${JSON.stringify(step(0))}\n`);
    // Within the bound: folded as before.
    await put('3_wf_ok.json', running('ok', 'gone-0123abcd-0'));
    await put(journalFileName('3_wf_ok.json'), `${JSON.stringify(step(0))}\n`);
    const logs: { msg: string; file?: string; journal?: string; reason?: string }[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') logs.push(JSON.parse(line) as (typeof logs)[number]);
      }
    });
    const report = await recoverRunsDir({
      runsDir: dir,
      now: START + 5000,
      maxRecordBytes: bound,
      logger: createLogger({ format: 'json', destination: sink, level: 'warn' }),
    });
    expect(report).to.deep.include({ runs: 3, journalsFolded: 1, journalsQuarantined: 2 });
    expect(report.recovered.sort()).to.deep.equal([
      '1_wf_huge.json',
      '2_wf_bad.json',
      '3_wf_ok.json',
    ]);
    expect(logs.map((l) => [l.msg, l.file, l.journal, l.reason]).sort()).to.deep.equal([
      [
        "run journal quarantined; the run is marked interrupted without its steps' progress",
        '1_wf_huge.json',
        '.1_wf_huge.json.journal.quarantine',
        `${huge.length} bytes, over the ${bound}-byte bound (AGENTIC_MAX_RUN_RECORD_BYTES)`,
      ],
      [
        "run journal quarantined; the run is marked interrupted without its steps' progress",
        '2_wf_bad.json',
        '.2_wf_bad.json.journal.quarantine',
        'unreadable: line 1 is not JSON',
      ],
    ]);
    // Set aside, not deleted; the runs' files are repaired and valid.
    expect((await readdir(dir)).sort()).to.deep.equal(
      [
        '.1_wf_huge.json.journal.quarantine',
        '.2_wf_bad.json.journal.quarantine',
        '1_wf_huge.json',
        '2_wf_bad.json',
        '3_wf_ok.json',
      ].sort(),
    );
    expect((await stat(join(dir, '.1_wf_huge.json.journal.quarantine'))).size).to.equal(
      huge.length,
    );
    for (const name of ['1_wf_huge.json', '2_wf_bad.json']) {
      const record = await read(name);
      expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
      expect(record).to.include({ status: 'failed', error: 'interrupted' });
      expect(record.steps.map((s) => [s.status, s.metadata.skip_reason])).to.deep.equal([
        ['skipped', 'interrupted'],
        ['skipped', 'interrupted'],
      ]);
      const warnings = (record.extra as { warnings: string[] }).warnings;
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.match(
        new RegExp(
          `^run journal set aside as \\.${name.replace('.', '\\.')}\\.journal\\.quarantine \\(.+\\): the steps' progress before the interruption is not in this record$`,
        ),
      );
    }
    const ok = await read('3_wf_ok.json');
    expect(ok.steps.map((s) => s.status)).to.deep.equal(['success', 'skipped']);
  });
});
