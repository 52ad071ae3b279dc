import { expect } from 'chai';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createRuntime, type Runtime } from '../../../src/index.js';
import { createTurnSlicer } from '../../../src/engine/turn-slicer.js';
import { removeDir, tempDir } from '../../conformance/helpers.js';

describe('createTurnSlicer', () => {
  it('lets pieces go at once while the turn has budget, then one slice per later turn, in order', async () => {
    let clock = 0;
    const slicer = createTurnSlicer(4, () => clock);
    const order: number[] = [];
    const turnOf: number[] = [];
    let turn = 0;
    // Counts turns: each setImmediate callback is one turn's check phase.
    let counting = true;
    const countTurns = (): void => {
      turn++;
      if (counting) setImmediate(countTurns);
    };
    setImmediate(countTurns);
    const piece = async (n: number): Promise<void> => {
      const slot = slicer.slot();
      if (slot !== undefined) await slot;
      order.push(n);
      turnOf.push(turn);
      clock += 1; // each piece costs 1 ms
    };
    // Pieces 0-3 fit the first slice (0, 1, 2, 3 ms spent before each); 4 onwards wait.
    const pieces = Array.from({ length: 10 }, (_, n) => piece(n));
    expect(order).to.deep.equal([0, 1, 2, 3]);
    await Promise.all(pieces);
    counting = false;
    expect(order).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // 4 pieces a slice, each slice in its own turn.
    expect(turnOf).to.deep.equal([0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
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
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  for (const persist of [false, true]) {
    it(`are spread over event-loop turns, a few milliseconds of begins each, in order (persist ${persist})`, async () => {
      const begun: string[] = [];
      const beginTurns: number[] = [];
      let turn = 0;
      let counting = true;
      const countTurns = (): void => {
        turn++;
        if (counting) setImmediate(countTurns);
      };
      setImmediate(countTurns);
      const rt = (runtime = createRuntime({
        runsDir: join(dir, 'runs'),
        workflowsDir: dir,
        persist,
        agents: {
          // 1 ms of synchronous work per run, as a run's begin costs on a busy service.
          busy: (request) => {
            begun.push(request.runId);
            beginTurns.push(turn);
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
      counting = false;
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
