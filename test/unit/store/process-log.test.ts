import { expect } from 'chai';
import {
  appendFile,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { createSilentLogger } from '../../../src/log.js';
import { newOwnerId } from '../../../src/files/process-token.js';
import { acquireOwnerLease, type OwnerLease } from '../../../src/store/owner.js';
import {
  PROCESS_LOG_FILE,
  processLogPrefix,
  readProcessLog,
  type LogFrame,
} from '../../../src/store/process-log.js';
import { startedRunRecord } from '../../../src/store/run-record.js';
import { recoverRunsDir } from '../../../src/store/startup-recovery.js';
import { finaliseInterruptedRun } from '../../../src/scale/run-finaliser.js';
import { WriteThread, type LogCheckpoint } from '../../../src/store/write-thread.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';

const workflow = compileWorkflow({
  name: 'wf',
  steps: [
    { name: 'a', agent: 'tier0_echo' },
    { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
  ],
});
const START = Date.UTC(2025, 0, 2);

function started(runId: string, owner: string): RunRecord {
  const record = startedRunRecord({
    runId,
    workflow,
    adapter: 'native',
    inputs: {},
    startTime: START,
    extra: {},
  });
  record.owner = owner;
  return record;
}

function ended(runId: string): RunRecord {
  const { owner: _owner, ...record } = started(runId, 'gone');
  return {
    ...record,
    status: 'success',
    steps: record.steps.map((step) => ({
      ...step,
      status: 'success',
      output: { text: step.step_name },
    })),
    success_rate: 100,
    end_time: new Date(START + 1000).toISOString(),
    total_duration_ms: 1000,
  };
}

/** Waits for what only the file system shows (a deferred write), checked every 10 ms. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const text = (record: RunRecord): string => `${JSON.stringify(record, null, 2)}\n`;

describe('process log (store/process-log.ts, log-replay.ts, the write worker)', function () {
  this.timeout(20_000);
  let dir: string;
  let thread: WriteThread;
  let lease: OwnerLease | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-process-log-'));
    // No checkpoint during a test unless it asks for one: the log is what is tested.
    thread = new WriteThread({ checkpointMs: 600_000 });
  });
  afterEach(async () => {
    await thread.stop();
    await lease?.release();
    lease = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const logs = async (): Promise<string[]> =>
    (await readdir(dir)).filter((name) => PROCESS_LOG_FILE.test(name));
  const read = async (name: string): Promise<RunRecord> =>
    JSON.parse(await readFile(join(dir, name), 'utf8')) as RunRecord;

  /** Writes each record as the runtime does with `writeSync: 'log'` (a dead owner: no owner file). */
  async function writeLogged(owner: string, records: [string, RunRecord][]): Promise<void> {
    const log = processLogPrefix(dir, owner);
    await Promise.all(
      records.map(([name, record]) => thread.write(join(dir, name), text(record), { log })),
    );
  }

  it('rebuilds lost, emptied and stale run files of a gone owner from its log, then removes the log', async () => {
    const owner = newOwnerId();
    await writeLogged(owner, [
      ['1_wf_lost.json', started('lost', owner)],
      ['2_wf_empty.json', started('empty', owner)],
      ['3_wf_stale.json', started('stale', owner)],
      ['4_wf_fine.json', started('fine', owner)],
    ]);
    await writeLogged(owner, [
      ['2_wf_empty.json', ended('empty')],
      ['3_wf_stale.json', ended('stale')],
      ['4_wf_fine.json', ended('fine')],
    ]);
    expect(await logs()).to.have.length(1);
    // The page cache lost with the machine: one file never reached the disk, one is empty, one
    // still holds its start record (its end record's rename was lost).
    await unlink(join(dir, '1_wf_lost.json'));
    await truncate(join(dir, '2_wf_empty.json'), 0);
    await thread.write(join(dir, '3_wf_stale.json'), text(started('stale', owner)));
    await thread.stop();

    const report = await recoverRunsDir({ runsDir: dir, now: START + 5000 });
    expect(report).to.include({ logsReplayed: 1, recordsReplayed: 3 });
    // The accepted run's start record is back (then marked interrupted: its owner is gone).
    expect(await read('1_wf_lost.json')).to.include({ run_id: 'lost', error: 'interrupted' });
    expect(await read('2_wf_empty.json')).to.deep.equal(ended('empty'));
    expect(await read('3_wf_stale.json')).to.deep.equal(ended('stale'));
    expect(await read('4_wf_fine.json')).to.deep.equal(ended('fine'));
    expect(report.recovered).to.deep.equal(['1_wf_lost.json']);
    expect(await logs()).to.deep.equal([]);
  });

  it('ignores a torn last frame and keeps every whole frame before it', async () => {
    const owner = newOwnerId();
    await writeLogged(owner, [['1_wf_run.json', started('run', owner)]]);
    await writeLogged(owner, [['1_wf_run.json', ended('run')]]);
    const [log] = await logs();
    // A crash mid-append: the next frame's header and half its text (never acknowledged).
    const torn = text(started('run', owner));
    await appendFile(
      join(dir, log!),
      `@${Buffer.byteLength(torn)} 1_wf_run.json\n${torn.slice(0, 40)}`,
    );
    await unlink(join(dir, '1_wf_run.json'));
    await thread.stop();

    const report = await recoverRunsDir({ runsDir: dir, now: START + 5000 });
    expect(report).to.include({ logsReplayed: 1, recordsReplayed: 1 });
    expect(await read('1_wf_run.json')).to.deep.equal(ended('run'));
    expect(await logs()).to.deep.equal([]);
  });

  it('never replays the log of a live owner, and replays it once that owner is gone (the orphan watch)', async () => {
    lease = await acquireOwnerLease({ runsDir: dir, logger: createSilentLogger() });
    await writeLogged(lease.id, [['1_wf_live.json', started('live', lease.id)]]);
    await unlink(join(dir, '1_wf_live.json'));

    const report = await recoverRunsDir({ runsDir: dir, now: START + 5000 });
    expect(report).to.include({ logsReplayed: 0, recordsReplayed: 0 });
    expect(await readdir(dir)).not.to.include('1_wf_live.json');
    expect(await logs()).to.have.length(1);

    await thread.stop();
    const id = lease.id;
    await lease.release();
    lease = undefined;
    // As the orphan watch recovers an owner found gone.
    const after = await recoverRunsDir({ runsDir: dir, now: START + 5000, only: new Set([id]) });
    expect(after).to.include({ logsReplayed: 1, recordsReplayed: 1 });
    expect(await read('1_wf_live.json')).to.include({ run_id: 'live', error: 'interrupted' });
  });

  it('checkpoints: once a generation is due, the files are flushed and its log removed', async () => {
    await thread.stop();
    thread = new WriteThread({ checkpointMs: 50 });
    const checkpointed = new Promise<LogCheckpoint>((resolve) => thread.onCheckpoint(resolve));
    const owner = newOwnerId();
    await writeLogged(owner, [
      ['1_wf_a.json', started('a', owner)],
      ['2_wf_b.json', started('b', owner)],
    ]);
    expect(await logs()).to.have.length(1);
    const checkpoint = await checkpointed;
    expect(checkpoint).to.include({ generations: 1, files: 2 });
    expect(checkpoint).not.to.have.property('code');
    expect(await logs()).to.deep.equal([]);
    // Later records go to a new generation.
    await writeLogged(owner, [['2_wf_b.json', ended('b')]]);
    expect(await logs()).to.have.length(1);
    await thread.checkpoint();
    expect(await logs()).to.deep.equal([]);
    expect(await read('2_wf_b.json')).to.deep.equal(ended('b'));
  });

  it('checkpoints many files with one flush of the file system (sync -f), a few one by one', async () => {
    const owner = newOwnerId();
    const checkpoints: LogCheckpoint[] = [];
    thread.onCheckpoint((checkpoint) => checkpoints.push(checkpoint));
    await writeLogged(
      owner,
      Array.from({ length: 70 }, (_, i): [string, RunRecord] => [`${i}_wf_r.json`, ended(`r${i}`)]),
    );
    await thread.checkpoint();
    await writeLogged(owner, [['0_wf_r.json', ended('r0')]]);
    await thread.checkpoint();
    expect(checkpoints.map(({ method, files }) => [method, files])).to.deep.equal([
      ['syncfs', 70],
      ['fsync', 1],
    ]);
    expect(await logs()).to.deep.equal([]);
  });

  it("defers a first record's file: written later, or never when a later write of the file came first", async () => {
    const owner = newOwnerId();
    const log = processLogPrefix(dir, owner);
    const short = join(dir, '1_wf_short.json');
    const long = join(dir, '2_wf_long.json');
    await thread.write(short, text(started('short', owner)), { log, deferMs: 200 });
    await thread.write(long, text(started('long', owner)), { log, deferMs: 200 });
    // Durable in the log when the writes resolve; no file yet.
    expect(await readdir(dir)).not.to.include.members(['1_wf_short.json', '2_wf_long.json']);
    await thread.write(short, text(ended('short')), { log });
    expect(await read('1_wf_short.json')).to.deep.equal(ended('short'));
    await until(async () => (await readdir(dir)).includes('2_wf_long.json'));
    expect(await read('2_wf_long.json')).to.deep.equal(started('long', owner));
    // The superseded start record was never written over the end record.
    expect(await read('1_wf_short.json')).to.deep.equal(ended('short'));
    // A kill before the deferred write: the record comes back from the log.
    await thread.write(join(dir, '3_wf_killed.json'), text(started('killed', owner)), {
      log,
      deferMs: 60_000,
    });
    await thread.stop();
    const report = await recoverRunsDir({ runsDir: dir, now: START + 5000 });
    expect(report.recovered).to.have.members(['2_wf_long.json', '3_wf_killed.json']);
    expect(await read('3_wf_killed.json')).to.include({ run_id: 'killed', error: 'interrupted' });
  });

  it('has the scale finaliser announce the end record a dead worker logged but whose file is stale', async () => {
    const owner = newOwnerId();
    await writeLogged(owner, [['1_wf_dead.json', started('dead', owner)]]);
    await writeLogged(owner, [['1_wf_dead.json', ended('dead')]]);
    await thread.write(join(dir, '1_wf_dead.json'), text(started('dead', owner)));
    await thread.stop();
    const published: string[] = [];
    let claimed = true;
    const outcome = await finaliseInterruptedRun({
      runId: 'dead',
      claims: {
        get: () => Promise.resolve(claimed ? { filename: '1_wf_dead.json' } : undefined),
        release: () => {
          const was = claimed;
          claimed = false;
          return Promise.resolve(was);
        },
      } as Parameters<typeof finaliseInterruptedRun>[0]['claims'],
      runsDir: dir,
      logger: createSilentLogger(),
      publish: (event) =>
        published.push(`${event.type}:${event.type === 'workflow_end' ? event.status : ''}`),
      recorded: () => undefined,
      recheckMs: 10,
      signal: new AbortController().signal,
    });
    expect(outcome).to.equal('ended');
    expect(await read('1_wf_dead.json')).to.deep.equal(ended('dead'));
    expect(published).to.deep.equal(['workflow_end:success']);
  });

  it('writes the log over zeros written ahead of its end, and reads it to its last frame without a torn tail', async () => {
    const owner = newOwnerId();
    await writeLogged(owner, [['1_wf_a.json', started('a', owner)]]);
    await writeLogged(owner, [['1_wf_a.json', ended('a')]]);
    const [name] = await logs();
    const path = join(dir, name!);
    const frames: LogFrame[] = [];
    const tail = await readProcessLog(path, 1024 * 1024, (frame) => frames.push(frame));
    expect(frames.map(({ file, record }) => [file, record.status])).to.deep.equal([
      ['1_wf_a.json', 'running'],
      ['1_wf_a.json', 'success'],
    ]);
    expect(tail).to.equal(undefined);
    // The frames end before the file does: the rest is zeros (an fdatasync over them changes no
    // file size, so it waits for no journal commit).
    const bytes = await readFile(path);
    const end = frames[1]!.offset + frames[1]!.length;
    expect(bytes.length).to.be.greaterThan(end);
    expect(bytes.subarray(end).every((byte) => byte === 0)).to.equal(true);
    // A frame cut short over the zeros (a crash mid-write) still ends the log with a tail.
    const torn = Buffer.from(`@${Buffer.byteLength(text(ended('b')))} 2_wf_b.json\n{"run`);
    const handle = await open(path, 'r+');
    await handle.write(torn, 0, torn.length, end);
    await handle.close();
    const again: LogFrame[] = [];
    const tornTail = await readProcessLog(path, 1024 * 1024, (frame) => again.push(frame));
    expect(again).to.have.length(2);
    expect(tornTail).to.include({ reason: 'frame is not JSON' });
  });

  it('reads a log of frames followed by zeros (as the writer leaves it) to its end', async () => {
    const owner = newOwnerId();
    const body = text(ended('z'));
    const path = join(dir, `.${owner}.0.log`);
    await writeFile(
      path,
      Buffer.concat([
        Buffer.from(`@${Buffer.byteLength(body)} 1_wf_z.json\n${body}`),
        Buffer.alloc(64 * 1024),
      ]),
    );
    const frames: LogFrame[] = [];
    const tail = await readProcessLog(path, 1024 * 1024, (frame) => frames.push(frame));
    expect(frames.map(({ record }) => record.run_id)).to.deep.equal(['z']);
    expect(tail).to.equal(undefined);
    const report = await recoverRunsDir({ runsDir: dir, now: START + 5000 });
    expect(report).to.include({ logsReplayed: 1, recordsReplayed: 1 });
    expect(await read('1_wf_z.json')).to.deep.equal(ended('z'));
  });

  it("answers a first record's write once its frame is durable, before the batch's other files are written", async () => {
    const owner = newOwnerId();
    const log = processLogPrefix(dir, owner);
    const order: string[] = [];
    let logAtStart = '';
    // One batch (queued in the same turn): an end record, then another run's first record.
    const end = thread.write(join(dir, '1_wf_end.json'), text(ended('end')), { log }).then(() => {
      order.push('end');
    });
    const first = thread
      .write(join(dir, '2_wf_first.json'), text(started('first', owner)), { log, deferMs: 60_000 })
      .then(async () => {
        order.push('first');
        const [name] = await logs();
        logAtStart = await readFile(join(dir, name!), 'utf8');
      });
    await Promise.all([end, first]);
    expect(order).to.deep.equal(['first', 'end']);
    // Durable when answered: its frame was in the log.
    expect(logAtStart).to.include('@');
    expect(logAtStart).to.include('2_wf_first.json');
    expect(logAtStart).to.include('"run_id": "first"');
  });

  it("creates a run's next temp file ahead once its first record is answered, and uses it for the end record", async () => {
    const owner = newOwnerId();
    const log = processLogPrefix(dir, owner);
    const path = join(dir, '1_wf_run.json');
    const temps = async (): Promise<string[]> =>
      (await readdir(dir)).filter((name) => name.startsWith('.1_wf_run.json.'));
    await thread.write(path, text(started('run', owner)), { log, deferMs: 60_000 });
    await until(async () => (await temps()).length === 1);
    const [spare] = await temps();
    expect((await stat(join(dir, spare!))).size).to.equal(0);
    expect(await readdir(dir)).not.to.include('1_wf_run.json');
    await thread.write(path, text(ended('run')), { log });
    expect(await read('1_wf_run.json')).to.deep.equal(ended('run'));
    expect(await temps()).to.deep.equal([]);
    // A spare left behind (the process killed before the run ended) goes with the other temp
    // files of a gone process at the next start-up.
    const other = join(dir, '2_wf_left.json');
    await thread.write(other, text(started('left', owner)), { log, deferMs: 60_000 });
    await until(async () =>
      (await readdir(dir)).some((name) => name.startsWith('.2_wf_left.json.')),
    );
    await thread.stop();
    const report = await recoverRunsDir({ runsDir: dir, now: START + 5000 });
    expect(report.tempFilesRemoved).to.equal(1);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
    expect(await read('2_wf_left.json')).to.include({ run_id: 'left', error: 'interrupted' });
  });
});
