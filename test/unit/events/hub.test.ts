import { expect } from 'chai';
import { createEventHub, type EventHub } from '../../../src/events/hub.js';
import { replayFromRecord } from '../../../src/events/replay-from-record.js';
import type { WorkflowEvent } from '../../../src/generated/events.js';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { FakeRuntime, sampleRecord } from './hub-fixtures.js';

const seqs = (events: WorkflowEvent[]): number[] => events.map((event) => event.seq);
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

function mapHistory(entries: Record<string, RunRecord>) {
  return {
    lookups: 0,
    async getByRunId(runId: string) {
      this.lookups += 1;
      await Promise.resolve();
      const record = entries[runId];
      return record === undefined ? undefined : { record, filename: `x_${runId}.json` };
    },
  };
}

describe('createEventHub', () => {
  let runtime: FakeRuntime;
  let hub: EventHub;

  beforeEach(() => {
    runtime = new FakeRuntime();
    hub = createEventHub({ runtime });
  });

  afterEach(() => {
    hub.close();
  });

  it('replays what was buffered, then delivers live events: no gap, no duplicate', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    runtime.step('r1', 'a');
    const live: WorkflowEvent[] = [];
    const lasts: boolean[] = [];
    const sub = hub.subscribe('r1', (event, last) => {
      live.push(event);
      lasts.push(last);
    });
    expect(seqs(sub.replay)).to.deep.equal([0, 1, 2]);
    expect(sub.finished).to.equal(false);
    expect(sub.source).to.equal('buffer');
    runtime.step('r1', 'b');
    runtime.emit('r1', { type: 'workflow_end', status: 'success' });
    expect(seqs(live)).to.deep.equal([3, 4, 5]);
    expect(lasts).to.deep.equal([false, false, true]);
    expect(hub.stats()).to.deep.include({ activeRuns: 0, finishedRuns: 1, listeners: 0 });
  });

  it('a subscriber joining from inside another listener misses nothing and repeats nothing', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    const late: WorkflowEvent[] = [];
    let replay: WorkflowEvent[] = [];
    hub.subscribe('r1', (event) => {
      if (event.seq === 2) replay = hub.subscribe('r1', (e) => late.push(e)).replay;
    });
    runtime.step('r1', 'a');
    runtime.step('r1', 'b');
    expect(seqs([...replay, ...late])).to.deep.equal(range(0, 4));
  });

  it('gives a late joiner of a finished run the whole buffer, finished', () => {
    const events = runtime.runToEnd('r1', 3);
    const sub = hub.subscribe('r1', () => expect.fail('no live events after the end'));
    expect(sub.replay).to.deep.equal(events);
    expect(sub.finished).to.equal(true);
  });

  it('knows active runs before their first event, and not unknown ones', () => {
    runtime.active.add('pending-run');
    expect(hub.knows('pending-run')).to.equal(true);
    expect(hub.knows('nope')).to.equal(false);
    expect(() => hub.subscribe('nope', () => undefined)).to.throw('Run not found');
    const got: WorkflowEvent[] = [];
    const sub = hub.subscribe('pending-run', (event) => got.push(event));
    expect(sub.replay).to.deep.equal([]);
    runtime.runToEnd('pending-run', 1);
    expect(seqs(got)).to.deep.equal(range(0, 3));
  });

  it('keeps the last 500 events of a run', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    for (let i = 0; i < 350; i += 1) runtime.step('r1', `s${i}`);
    const { replay } = hub.subscribe('r1', () => undefined);
    expect(replay).to.have.length(500);
    expect(seqs(replay)).to.deep.equal(range(201, 700));
  });

  it('keeps a bounded number of finished buffers and rebuilds evicted runs from the run file', async () => {
    hub.close();
    const history = mapHistory({ r0: sampleRecord('r0') });
    hub = createEventHub({ runtime, history, finishedBuffers: 2 });
    for (let i = 0; i < 3; i += 1) runtime.runToEnd(`r${i}`);
    expect(hub.knows('r0')).to.equal(false);
    expect(hub.knows('r1')).to.equal(true);
    expect(hub.stats().finishedRuns).to.equal(2);

    const buffered = await hub.open('r2', () => undefined);
    expect(buffered?.source).to.equal('buffer');
    expect(history.lookups).to.equal(0);

    const rebuilt = await hub.open('r0', () => undefined);
    expect(rebuilt?.source).to.equal('record');
    expect(rebuilt?.finished).to.equal(true);
    expect(rebuilt?.replay).to.deep.equal(replayFromRecord(sampleRecord('r0'), 'x_r0.json'));
    expect(await hub.open('missing', () => undefined)).to.equal(undefined);
  });

  it('memory stays flat: 5,000 finished runs leave only the bounded buffers', () => {
    hub.close();
    hub = createEventHub({ runtime, finishedBuffers: 100 });
    for (let i = 0; i < 5000; i += 1) runtime.runToEnd(`run-${i}`, 1);
    expect(hub.stats()).to.deep.include({ activeRuns: 0, finishedRuns: 100, listeners: 0 });
  });

  it('bounds the finished buffers by serialized bytes, dropping the least recently finished', async () => {
    hub.close();
    const history = mapHistory({ big: sampleRecord('big') });
    hub = createEventHub({ runtime, history, finishedBuffersMaxBytes: 64 * 1024 });
    const big = 'x'.repeat(10 * 1024);
    for (let i = 0; i < 20; i += 1) {
      runtime.step(`r${i}`, 'a', { big });
      runtime.endRun(`r${i}`);
    }
    const stats = hub.stats();
    // Each run holds ~10 KiB of JSON: six fit in 64 KiB, far fewer than the count bound.
    expect(stats.finishedRuns).to.equal(6);
    expect(stats.finishedBytes).to.be.within(6 * big.length, 64 * 1024);
    expect(hub.knows('r19')).to.equal(true);
    expect(hub.knows('r13')).to.equal(false);

    // A run over the whole budget is not kept; its late joiners get the run file.
    runtime.step('big', 'a', { big: 'y'.repeat(65 * 1024) });
    runtime.endRun('big');
    expect(hub.knows('big')).to.equal(false);
    expect(hub.knows('r19')).to.equal(true);
    expect((await hub.open('big', () => undefined))?.source).to.equal('record');
  });

  it('re-weighs a finished buffer when evaluation events arrive after workflow_end', () => {
    hub.close();
    hub = createEventHub({ runtime, finishedBuffersMaxBytes: 64 * 1024 });
    runtime.runToEnd('r1', 1);
    const before = hub.stats().finishedBytes;
    runtime.emit('r1', { type: 'evaluation_start', rubric_id: 'x'.repeat(1000) });
    expect(hub.stats().finishedBytes).to.be.above(before + 1000);
  });

  describe('a run not started yet', () => {
    it('is undefined unless the caller waits, and waitForStart is asked only then', async () => {
      runtime.emit('known', { type: 'workflow_start', workflow_name: 'wf' });
      let asked = 0;
      const waitForStart = () => ((asked += 1), false);
      expect((await hub.open('known', () => undefined, { waitForStart }))?.source).to.equal(
        'buffer',
      );
      expect(asked).to.equal(0);
      expect(await hub.open('later', () => undefined, { waitForStart })).to.equal(undefined);
      expect(asked).to.equal(1);
      expect(hub.stats().pending).to.equal(0);
    });

    it('delivers every event from seq 0 live once it starts, to each waiting subscriber', async () => {
      const got: [WorkflowEvent[], WorkflowEvent[]] = [[], []];
      const lasts: boolean[] = [];
      const subs = await Promise.all(
        got.map((events) =>
          hub.open('later', (event, last) => (events.push(event), lasts.push(last)), {
            waitForStart: () => true,
          }),
        ),
      );
      expect(subs.map((sub) => [sub?.source, sub?.finished, sub?.replay])).to.deep.equal([
        ['pending', false, []],
        ['pending', false, []],
      ]);
      expect(hub.knows('later')).to.equal(false);
      expect(hub.stats().pending).to.equal(2);
      const emitted = runtime.runToEnd('later', 1);
      expect(got).to.deep.equal([emitted, emitted]);
      expect(lasts.filter(Boolean)).to.have.length(2);
      expect(hub.stats()).to.deep.include({ pending: 0, listeners: 0 });
    });

    it('leaves nothing behind when the subscriber gives up before the run starts', async () => {
      const sub = await hub.open('never', () => expect.fail('no events'), {
        waitForStart: () => true,
      });
      expect(hub.stats().pending).to.equal(1);
      sub?.unsubscribe();
      sub?.unsubscribe();
      expect(hub.stats().pending).to.equal(0);
      runtime.runToEnd('never', 0);
      expect(hub.stats().listeners).to.equal(0);
    });

    it('is told when the hub closes', async () => {
      let told = 0;
      await hub.open('later', () => undefined, {
        waitForStart: () => true,
        onHubClose: () => (told += 1),
      });
      hub.close();
      expect(told).to.equal(1);
      expect(hub.stats().pending).to.equal(0);
    });
  });

  it('ends the stream at evaluation_complete when the run record requested evaluation', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    runtime.record(
      { ...sampleRecord('r1', { evaluation: { enabled: true } }), status: 'running' },
      'f',
    );
    const lasts: [string, boolean][] = [];
    hub.subscribe('r1', (event, last) => lasts.push([event.type, last]));
    runtime.emit('r1', { type: 'workflow_end', status: 'success' });
    const afterEnd = hub.subscribe('r1', () => undefined);
    expect(afterEnd.finished).to.equal(false);
    afterEnd.unsubscribe();
    runtime.emit('r1', { type: 'evaluation_start', rubric_id: 'default' });
    runtime.emit('r1', { type: 'evaluation_complete', overall_score: 90 });
    expect(lasts).to.deep.equal([
      ['workflow_end', false],
      ['evaluation_start', false],
      ['evaluation_complete', true],
    ]);
    expect(hub.subscribe('r1', () => undefined).finished).to.equal(true);
  });

  it('publishes outside events with the next seq', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    const got: WorkflowEvent[] = [];
    hub.subscribe('r1', (event) => got.push(event));
    hub.publish({ type: 'error', run_id: 'r1', timestamp: 't', message: 'boom' });
    expect(got).to.deep.equal([
      { type: 'error', run_id: 'r1', timestamp: 't', message: 'boom', seq: 1 },
    ]);
  });

  it('drops duplicate and out-of-order events', () => {
    const first = runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    const [, end] = runtime.step('r1', 'a');
    runtime.emitRaw(first);
    runtime.emitRaw(end!);
    expect(seqs(hub.subscribe('r1', () => undefined).replay)).to.deep.equal([0, 1, 2]);
  });

  it('starts over when a finished run id is reused by a new run', () => {
    runtime.runToEnd('r1', 2);
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'again' });
    const sub = hub.subscribe('r1', () => undefined);
    expect(sub.replay).to.have.length(1);
    expect(sub.replay[0]).to.include({ type: 'workflow_start', workflow_name: 'again', seq: 0 });
    expect(sub.finished).to.equal(false);
  });

  it('isolates a throwing listener from the others and from the runtime', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    const got: number[] = [];
    hub.subscribe('r1', () => {
      throw new Error('listener bug');
    });
    hub.subscribe('r1', (event) => got.push(event.seq));
    runtime.step('r1', 'a');
    expect(got).to.deep.equal([1, 2]);
  });

  it('stops delivering after unsubscribe', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    const got: number[] = [];
    const sub = hub.subscribe('r1', (event) => got.push(event.seq));
    runtime.step('r1', 'a');
    sub.unsubscribe();
    runtime.step('r1', 'b');
    expect(got).to.deep.equal([1, 2]);
    expect(hub.stats().listeners).to.equal(0);
  });

  it('close() detaches from the runtime and tells subscribers', () => {
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    let told = 0;
    hub.subscribe(
      'r1',
      () => undefined,
      () => (told += 1),
    );
    expect(runtime.listenerCount).to.equal(2);
    hub.close();
    expect(told).to.equal(1);
    expect(runtime.listenerCount).to.equal(0);
    expect(hub.knows('r1')).to.equal(false);
  });

  it('tells subscribers still waiting for evaluation when their buffer is evicted', () => {
    hub.close();
    hub = createEventHub({ runtime, finishedBuffers: 1 });
    runtime.emit('r1', { type: 'workflow_start', workflow_name: 'wf' });
    runtime.emit('r1', { type: 'evaluation_start' });
    let told = false;
    hub.subscribe(
      'r1',
      () => undefined,
      () => (told = true),
    );
    runtime.emit('r1', { type: 'workflow_end', status: 'success' });
    expect(told).to.equal(false);
    runtime.runToEnd('r2', 0);
    expect(told).to.equal(true);
    runtime.emit('r1', { type: 'evaluation_complete' });
    expect(hub.stats().activeRuns).to.equal(0);
  });
});

describe('replayFromRecord', () => {
  it('rebuilds workflow_start, step_start/step_end per step, workflow_end from a run file', () => {
    const events = replayFromRecord(
      sampleRecord('r9'),
      '20260101T000000000Z_test_deterministic_r9.json',
    );
    expect(events).to.deep.equal([
      {
        type: 'workflow_start',
        run_id: 'r9',
        seq: 0,
        timestamp: '2026-01-01T00:00:00.000Z',
        workflow_name: 'test_deterministic',
        adapter: 'native',
        inputs: { text: 'hi' },
        step_count: 2,
      },
      {
        type: 'step_start',
        run_id: 'r9',
        seq: 1,
        timestamp: '2026-01-01T00:00:00.010Z',
        step: 'echo',
        agent: 'tier0_echo',
        tier: '0',
        input: { text: 'hi' },
        attempt: 1,
      },
      {
        type: 'step_end',
        run_id: 'r9',
        seq: 2,
        timestamp: '2026-01-01T00:00:00.013Z',
        step: 'echo',
        status: 'success',
        duration_ms: 3,
        agent: 'tier0_echo',
        model_used: null,
        tokens_used: null,
        tier: '0',
        input: { text: 'hi' },
        output: { text: 'hi' },
        error: null,
        retry_count: 0,
        skip_reason: null,
        attempt: 1,
      },
      {
        type: 'step_end',
        run_id: 'r9',
        seq: 3,
        timestamp: '2026-01-01T00:00:00.020Z',
        step: 'maybe',
        status: 'skipped',
        duration_ms: 0,
        agent: 'tier0_echo',
        model_used: null,
        tokens_used: null,
        tier: '0',
        input: null,
        output: null,
        error: null,
        retry_count: 0,
        skip_reason: 'condition false',
      },
      {
        type: 'workflow_end',
        run_id: 'r9',
        seq: 4,
        timestamp: '2026-01-01T00:00:00.020Z',
        workflow_name: 'test_deterministic',
        status: 'success',
        duration_ms: 20,
        error: null,
        final_output: { text: 'hi' },
        success_rate: 100,
        filename: '20260101T000000000Z_test_deterministic_r9.json',
      },
    ]);
  });

  it('adds the evaluation pair when the run was scored', () => {
    const record = sampleRecord('r9', {
      evaluation: {
        enabled: true,
        rubric_id: 'default',
        overall_score: 82.5,
        grade: 'B',
        passed: true,
      },
    });
    const events = replayFromRecord(record);
    expect(events.slice(-2)).to.deep.equal([
      {
        type: 'evaluation_start',
        run_id: 'r9',
        seq: 5,
        timestamp: record.end_time,
        rubric_id: 'default',
      },
      {
        type: 'evaluation_complete',
        run_id: 'r9',
        seq: 6,
        timestamp: record.end_time,
        rubric_id: 'default',
        overall_score: 82.5,
        grade: 'B',
        passed: true,
      },
    ]);
  });

  it('stops before workflow_end for a run file that is still running', () => {
    const record: RunRecord = { ...sampleRecord('r9'), status: 'running', end_time: null };
    record.steps = record.steps.slice(0, 1).map((step) => ({ ...step, status: 'running' }));
    expect(replayFromRecord(record).map((event) => event.type)).to.deep.equal([
      'workflow_start',
      'step_start',
    ]);
  });
});
