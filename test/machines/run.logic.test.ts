import { expect } from 'chai';
import { SimulatedClock, createActor, fromPromise, type AnyEventObject } from 'xstate';
import {
  RUN_STATE_DESCRIPTIONS,
  createRunLogic,
  type RunResult,
} from '../../machines/run.logic.js';
import type {
  EngineLogic,
  EngineOutput,
  EngineSnapshot,
  StepOutcome,
} from '../../machines/engine-contract.js';
import { engineInput, workflowOf } from './fixtures.js';

const outcome = (status: StepOutcome['status'], error: string | null = null): StepOutcome => ({
  status,
  input: null,
  output: null,
  error,
  skipReason: null,
  modelUsed: null,
  tokensUsed: null,
  attempts: 1,
  iterations: 1,
  startTime: 0,
  endTime: 0,
});

const output = (...outcomes: StepOutcome[]): EngineOutput => ({
  outcomes,
  context: {},
  finalOutput: {},
});

/** An engine that records the commands it receives and finishes when told to. */
function controllableEngine() {
  const received: AnyEventObject[] = [];
  let finish!: (output: EngineOutput) => void;
  const logic: EngineLogic = {
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
    transition: (snapshot: EngineSnapshot, event: AnyEventObject): EngineSnapshot => {
      received.push(event);
      if (event.type === 'engine.finish') {
        return { status: 'done', output: event.output as EngineOutput, error: undefined };
      }
      return snapshot;
    },
    start: (_snapshot: unknown, scope) => {
      finish = (out) => scope.self.send({ type: 'engine.finish', output: out });
    },
    getPersistedSnapshot: (snapshot: EngineSnapshot) => snapshot,
  };
  return { logic, received, finish: (out: EngineOutput) => finish(out) };
}

function runActor(engine: EngineLogic, timeoutMs?: number, clock?: SimulatedClock) {
  const actor = createActor(createRunLogic(engine), {
    input: { runId: 'r', timeoutMs, engine: engineInput(workflowOf([[], [0]])) },
    ...(clock === undefined ? {} : { clock }),
  });
  const done = new Promise<RunResult>((resolve, reject) =>
    actor.subscribe({
      next: (s) => {
        if (s.status === 'done') resolve(s.output);
      },
      error: reject,
    }),
  );
  actor.start();
  return { actor, done };
}

describe('run logic', () => {
  it('waits in pending until run.begin, emitting run.started as it starts running', async () => {
    const engine = controllableEngine();
    const { actor, done } = runActor(engine.logic);
    const emitted: string[] = [];
    actor.on('run.started', (e) => emitted.push(e.type));
    expect(actor.getSnapshot().value).to.equal('pending');
    actor.send({ type: 'run.begin' });
    expect(actor.getSnapshot().matches('running')).to.equal(true);
    expect(emitted).to.deep.equal(['run.started']);
    engine.finish(output(outcome('success'), outcome('skipped')));
    expect(await done).to.deep.equal({
      status: 'success',
      error: null,
      engine: output(outcome('success'), outcome('skipped')),
    });
    expect(actor.getSnapshot().value).to.equal('success');
  });

  it('fails when a step failed, naming the first failed step', async () => {
    const engine = controllableEngine();
    const { actor, done } = runActor(engine.logic);
    actor.send({ type: 'run.begin' });
    engine.finish(output(outcome('success'), outcome('failed', 'boom')));
    const result = await done;
    expect(result).to.include({ status: 'failed', error: "step 's1' failed: boom" });
  });

  it('sends engine.abort with the cancel reason and fails with it', async () => {
    const engine = controllableEngine();
    const { actor, done } = runActor(engine.logic);
    actor.send({ type: 'run.begin' });
    actor.send({ type: 'run.cancel' });
    actor.send({ type: 'run.cancel', reason: 'again' });
    expect(engine.received.filter((e) => e.type === 'engine.abort')).to.deep.equal([
      { type: 'engine.abort', reason: 'cancelled' },
    ]);
    engine.finish(output(outcome('failed', 'cancelled'), outcome('skipped')));
    expect(await done).to.include({ status: 'failed', error: 'cancelled' });
  });

  it('fails a run cancelled while pending without starting the engine', async () => {
    const engine = controllableEngine();
    const { actor, done } = runActor(engine.logic);
    actor.send({ type: 'run.cancel', reason: 'shutdown' });
    expect(await done).to.deep.equal({ status: 'failed', error: 'shutdown', engine: null });
    expect(engine.received).to.deep.equal([]);
  });

  it('aborts the engine with "run timed out" when the timeout expires on the system clock', async () => {
    const clock = new SimulatedClock();
    const engine = controllableEngine();
    const { actor, done } = runActor(engine.logic, 1000, clock);
    actor.send({ type: 'run.begin' });
    expect(actor.getSnapshot().matches({ running: 'timed' })).to.equal(true);
    clock.increment(999);
    expect(engine.received).to.deep.equal([]);
    clock.increment(1);
    expect(engine.received).to.deep.equal([{ type: 'engine.abort', reason: 'run timed out' }]);
    expect(actor.getSnapshot().matches({ running: 'timedOut' })).to.equal(true);
    engine.finish(output(outcome('failed', 'run timed out'), outcome('skipped')));
    expect(await done).to.include({ status: 'failed', error: 'run timed out' });
  });

  it('cancels the run timeout when the engine finishes first', async () => {
    const clock = new SimulatedClock();
    const engine = controllableEngine();
    const { actor, done } = runActor(engine.logic, 1000, clock);
    actor.send({ type: 'run.begin' });
    expect(actor.getSnapshot().matches('running')).to.equal(true);
    engine.finish(output(outcome('success'), outcome('success')));
    expect(await done).to.include({ status: 'success', error: null });
    clock.increment(1000);
    expect(engine.received.filter((e) => e.type === 'engine.abort')).to.deep.equal([]);
    expect(actor.getSnapshot().value).to.equal('success');
  });

  it('has no timer without a timeout', () => {
    const engine = controllableEngine();
    const { actor } = runActor(engine.logic);
    actor.send({ type: 'run.begin' });
    expect(actor.getSnapshot().matches({ running: 'untimed' })).to.equal(true);
    actor.stop();
  });

  it('fails with the engine error when the engine actor errors', async () => {
    const engine = fromPromise<EngineOutput>(() => Promise.reject(new Error('engine broke')));
    const { actor, done } = runActor(engine as unknown as EngineLogic);
    actor.send({ type: 'run.begin' });
    expect(await done).to.deep.equal({ status: 'failed', error: 'engine broke', engine: null });
  });

  it('describes every state for the inspector', () => {
    expect(Object.keys(RUN_STATE_DESCRIPTIONS).sort()).to.deep.equal(
      [
        'pending',
        'running',
        'running.untimed',
        'running.timed',
        'running.timedOut',
        'success',
        'failed',
      ].sort(),
    );
    for (const text of Object.values(RUN_STATE_DESCRIPTIONS)) expect(text).to.not.equal('');
  });
});
