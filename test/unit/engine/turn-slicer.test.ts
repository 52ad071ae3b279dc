import { expect } from 'chai';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createRuntime, type Runtime } from '../../../src/index.js';
import { createTurnSlicer } from '../../../src/engine/turn-slicer.js';
import { removeDir, tempDir } from '../../conformance/helpers.js';

/** Counts event-loop turns (one `setImmediate` callback per check phase) until the suite's `afterEach` stops it. */
let counters: (() => void)[] = [];
function countTurns(): { readonly now: number } {
  const counter = { now: 0 };
  let counting = true;
  const tick = (): void => {
    counter.now++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  counters.push(() => (counting = false));
  return counter;
}
function stopCounters(): void {
  for (const stop of counters) stop();
  counters = [];
}

describe('createTurnSlicer', () => {
  afterEach(stopCounters);

  it('lets pieces go at once while the turn has budget, then one slice per later turn, in order', async () => {
    let clock = 0;
    const slicer = createTurnSlicer(4, () => clock);
    const order: number[] = [];
    const turnOf: number[] = [];
    const turns = countTurns();
    const piece = async (n: number): Promise<void> => {
      const slot = slicer.slot();
      if (slot !== undefined) await slot;
      order.push(n);
      turnOf.push(turns.now);
      clock += 1; // each piece costs 1 ms
    };
    // Piece 0 goes at once; 1-3 follow while the slice has budget (1, 2, 3 ms spent before
    // each); 4 onwards wait for later turns.
    const pieces = Array.from({ length: 10 }, (_, n) => piece(n));
    expect(order).to.deep.equal([0]);
    await Promise.all(pieces);
    expect(order).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // 4 pieces a slice, each slice in its own turn.
    expect(turnOf).to.deep.equal([0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
  });

  it('counts the work a piece does in promise continuations against the slice', async () => {
    let clock = 0;
    const slicer = createTurnSlicer(4, () => clock);
    const turnOf: number[] = [];
    const turns = countTurns();
    const piece = async (): Promise<void> => {
      const slot = slicer.slot();
      if (slot !== undefined) await slot;
      turnOf.push(turns.now);
      // As a run's begin: little at once, most of it a few continuations later.
      for (let i = 0; i < 3; i++) await Promise.resolve();
      clock += 2;
    };
    await Promise.all(Array.from({ length: 6 }, () => piece()));
    expect(turnOf).to.deep.equal([0, 0, 1, 1, 2, 2]);
  });

  it('starts a fresh slice in a later turn when nobody waits', async () => {
    let clock = 0;
    const slicer = createTurnSlicer(4, () => clock);
    expect(slicer.slot()).to.equal(undefined);
    clock += 10;
    // Over budget in this turn: the next piece waits for the next turn.
    const waiting = slicer.slot();
    expect(waiting).to.be.instanceOf(Promise);
    await waiting;
    await nextTurn();
    await nextTurn();
    // A later turn with nobody queued: a new slice, the piece goes at once.
    expect(slicer.slot()).to.equal(undefined);
  });
});

describe('runtime: run starts arriving together', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-slices-');
  });
  afterEach(async () => {
    stopCounters();
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  for (const persist of [false, true]) {
    it(`are spread over event-loop turns, a few milliseconds of begins each, in order (persist ${persist})`, async () => {
      const begun: string[] = [];
      const beginTurns: number[] = [];
      const turns = countTurns();
      const rt = (runtime = createRuntime({
        runsDir: join(dir, 'runs'),
        workflowsDir: dir,
        persist,
        agents: {
          // 1 ms of synchronous work per run, as a run's begin costs on a busy service.
          busy: (request) => {
            begun.push(request.runId);
            beginTurns.push(turns.now);
            const until = performance.now() + 1;
            while (performance.now() < until);
            return Promise.resolve({ output: { ok: true }, modelUsed: null, tokensUsed: null });
          },
        },
      }));
      const workflow = { name: 'w', steps: [{ name: 'a', agent: 'busy' }] };
      const ids = Array.from({ length: 40 }, (_, n) => `burst-${n}`);
      const handles = await Promise.all(ids.map((runId) => rt.start({ workflow, runId })));
      const records = await Promise.all(handles.map((handle) => handle.done));
      expect(records.map((record) => record.status)).to.deep.equal(ids.map(() => 'success'));
      // The slice budget is 4 ms: at most 4 one-millisecond begins go in a slice, and a turn
      // (counted from check phase to check phase) overlaps at most two slices.
      const perTurn = new Map<number, number>();
      for (const at of beginTurns) perTurn.set(at, (perTurn.get(at) ?? 0) + 1);
      expect(Math.max(...perTurn.values())).to.be.at.most(8);
      // Without run files, nothing reorders the starts; with them, the writes may complete out of order.
      if (persist) expect([...begun].sort()).to.deep.equal([...ids].sort());
      else expect(begun).to.deep.equal(ids);
    });
  }
});

describe('runtime: run ends written together', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-end-slices-');
  });
  afterEach(async () => {
    stopCounters();
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  it('send their workflow_end over event-loop turns, a few milliseconds of ends each', async () => {
    let release!: () => void;
    const finishTogether = new Promise<void>((resolve) => (release = resolve));
    const rt = (runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: dir,
      persist: true,
      // Every step finishes at once, so the end files go to the write thread together.
      agents: {
        wait: () =>
          finishTogether.then(() => ({ output: { ok: true }, modelUsed: null, tokensUsed: null })),
      },
    }));
    const turns = countTurns();
    const endTurns: number[] = [];
    const ended: string[] = [];
    rt.subscribe((event) => {
      if (event.type !== 'workflow_end') return;
      ended.push(event.run_id);
      endTurns.push(turns.now);
      // 1 ms of synchronous work per end, as a subscriber's fan-out costs on a busy service.
      const until = performance.now() + 1;
      while (performance.now() < until);
    });
    const workflow = { name: 'w', steps: [{ name: 'a', agent: 'wait' }] };
    const ids = Array.from({ length: 40 }, (_, n) => `end-${n}`);
    const handles = await Promise.all(ids.map((runId) => rt.start({ workflow, runId })));
    release();
    const records = await Promise.all(handles.map((handle) => handle.done));
    expect(records.map((record) => record.status)).to.deep.equal(ids.map(() => 'success'));
    expect([...ended].sort()).to.deep.equal([...ids].sort());
    // The slice budget is 4 ms: at most 4 one-millisecond ends go in a slice, and a turn
    // (counted from check phase to check phase) overlaps at most two slices.
    const perTurn = new Map<number, number>();
    for (const at of endTurns) perTurn.set(at, (perTurn.get(at) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).to.be.at.most(8);
  });
});
