import { expect } from 'chai';
import type { AnyActorRef, AnyMachineSnapshot } from 'xstate';
import {
  failed,
  GRAPH_CLOCK_START,
  manualRunner,
  ok,
  startGraph,
  workflow,
  type PendingAttempt,
} from './graph-helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

/** Lets queued promise callbacks and actor events run (no timers involved). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('graph engine execution', () => {
  let actor: AnyActorRef | undefined;
  afterEach(() => {
    actor?.stop();
    actor = undefined;
  });

  it('runs a chain in order and maps outputs into context and final output', async () => {
    const wf = workflow(
      [
        { name: 'a', agent: 'tier0_echo', inputs: { text: 'hi' }, outputs: { text: 'greeting' } },
        { name: 'b', agent: 'tier0_echo', depends_on: ['a'], inputs: { t: '${context.greeting}' } },
        {
          name: 'c',
          agent: 'tier0_echo',
          depends_on: ['b'],
          inputs: { t: '${steps.b.outputs.t}' },
        },
      ],
      { result: { from: '${steps.c.outputs.t}' } },
    );
    const run = startGraph(wf);
    actor = run.actor;
    const output = await run.done;
    expect(run.events).to.deep.equal([
      'started a #1',
      'finished a success',
      'started b #1',
      'finished b success',
      'started c #1',
      'finished c success',
    ]);
    expect(output.context).to.deep.equal({ greeting: 'hi' });
    expect(output.finalOutput).to.deep.equal({ result: 'hi' });
    expect(output.outcomes.map((o) => o.status)).to.deep.equal(['success', 'success', 'success']);
    expect(run.actor.getSnapshot().value).to.equal('completed');
  });

  it('starts a join step only when every predecessor has finished', async () => {
    const wf = workflow([
      { name: 'a', agent: 'tier0_echo' },
      { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
      { name: 'c', agent: 'tier0_echo', depends_on: ['a'] },
      { name: 'd', agent: 'tier0_echo', depends_on: ['b', 'c'] },
    ]);
    const runner = manualRunner();
    const run = startGraph(wf, { runAttempt: runner.run });
    actor = run.actor;
    const settle = async (step: string) => {
      const attempt = runner.started.find((s: PendingAttempt) => s.step === step)!;
      attempt.resolve(ok({ step }));
      await flush();
    };
    await settle('a');
    expect(runner.started.map((s) => s.step)).to.deep.equal(['a', 'b', 'c']);
    await settle('c');
    expect(runner.started.map((s) => s.step)).to.deep.equal(['a', 'b', 'c']);
    // Each step's region shows its state; the scheduler core agrees.
    const states = { a: 'success', b: 'running', c: 'success', d: 'pending' };
    expect(run.actor.getSnapshot().value).to.deep.equal({ running: states });
    expect(run.actor.getSnapshot().context.run!.stepStates()).to.deep.equal(states);
    await settle('b');
    expect(runner.started.map((s) => s.step)).to.deep.equal(['a', 'b', 'c', 'd']);
    await settle('d');
    await run.done;
    expect(run.events).to.deep.equal([
      'started a #1',
      'finished a success',
      'started b #1',
      'started c #1',
      'finished c success',
      'finished b success',
      'started d #1',
      'finished d success',
    ]);
  });

  it('skips a step whose when is false and still runs its dependents', async () => {
    const wf = workflow(
      [
        { name: 'a', agent: 'tier0_echo', inputs: { v: 'x' } },
        { name: 'b', agent: 'tier0_echo', depends_on: ['a'], when: '${inputs.go == true}' },
        { name: 'c', agent: 'tier0_echo', depends_on: ['b'], inputs: { v: 'after' } },
      ],
      { r: { from: '${coalesce(steps.b.outputs.v, steps.c.outputs.v)}' } },
    );
    const run = startGraph(wf, { inputs: { go: false } });
    actor = run.actor;
    const output = await run.done;
    expect(run.events).to.deep.equal([
      'started a #1',
      'finished a success',
      'finished b skipped (condition false)',
      'started c #1',
      'finished c success',
    ]);
    expect(output.outcomes[1]).to.include({ status: 'skipped', attempts: 0, startTime: null });
    expect(output.finalOutput).to.deep.equal({ r: 'after' });
  });

  it('runs a step whose when is true', async () => {
    const wf = workflow([{ name: 'a', agent: 'tier0_echo', when: '${inputs.go == true}' }]);
    const run = startGraph(wf, { inputs: { go: true } });
    actor = run.actor;
    await run.done;
    expect(run.events).to.deep.equal(['started a #1', 'finished a success']);
  });

  it('skips transitive dependents of a failed step while an independent branch completes', async () => {
    const wf = workflow([
      { name: 'bad', agent: 'tier0_fail' },
      { name: 'mid', agent: 'tier0_echo', depends_on: ['bad'] },
      { name: 'leaf', agent: 'tier0_echo', depends_on: ['mid'] },
      { name: 'other', agent: 'tier0_echo' },
    ]);
    const runner = manualRunner();
    const run = startGraph(wf, { runAttempt: runner.run });
    actor = run.actor;
    runner.started[0]!.resolve(failed('boom'));
    await flush();
    runner.started[1]!.resolve(ok({}));
    const output = await run.done;
    expect(run.events).to.deep.equal([
      'started bad #1',
      'started other #1',
      'finished bad failed',
      'finished mid skipped (dependency failed: bad)',
      'finished leaf skipped (dependency failed: bad)',
      'finished other success',
    ]);
    expect(output.outcomes[0]).to.include({ status: 'failed', error: 'boom', attempts: 1 });
  });

  it('records an attempt that throws as a failure', async () => {
    const wf = workflow([{ name: 'a', agent: 'tier0_echo' }]);
    const run = startGraph(wf, {
      runAttempt: () => {
        throw new Error('agent exploded');
      },
    });
    actor = run.actor;
    const output = await run.done;
    expect(run.events).to.deep.equal(['started a #1', 'finished a failed']);
    expect(output.outcomes[0]!.error).to.equal('agent exploded');
  });

  it('retries a failed attempt after the delay, then succeeds', async () => {
    const wf = workflow([{ name: 'a', agent: 'tier0_echo', max_attempts: 3 }]);
    const runner = manualRunner();
    const clock = new TestClock(GRAPH_CLOCK_START);
    const run = startGraph(wf, { runAttempt: runner.run, clock, retryDelayMs: (n) => 100 * n });
    actor = run.actor;
    runner.started[0]!.resolve(failed('flaky'));
    await flush();
    expect(clock.armedDelays()).to.deep.equal([100]);
    expect(run.actor.getSnapshot().value).to.deep.equal({ running: { a: 'retrying' } });
    const snapshot = run.actor.getSnapshot() as unknown as AnyMachineSnapshot;
    expect(snapshot.matches({ running: { a: 'retrying' } })).to.equal(true);
    expect(run.actor.getSnapshot().context.run!.stepStates()).to.deep.equal({ a: 'retrying' });
    clock.fireAll();
    await flush();
    runner.started[1]!.resolve(ok({ v: 1 }));
    const output = await run.done;
    expect(run.events).to.deep.equal([
      'started a #1',
      'retrying a #1',
      'started a #2',
      'finished a success',
    ]);
    expect(output.outcomes[0]).to.include({ status: 'success', attempts: 2 });
  });

  it('fails a step whose attempts are exhausted', async () => {
    const wf = workflow([{ name: 'a', agent: 'tier0_echo' }]);
    const clock = new TestClock(GRAPH_CLOCK_START);
    const runner = manualRunner();
    const run = startGraph(wf, { runAttempt: runner.run, clock, maxAttempts: 2 });
    actor = run.actor;
    runner.started[0]!.resolve(failed('one'));
    await flush();
    clock.fireAll();
    await flush();
    runner.started[1]!.resolve(failed('two'));
    const output = await run.done;
    expect(run.events).to.deep.equal([
      'started a #1',
      'retrying a #1',
      'started a #2',
      'finished a failed',
    ]);
    expect(output.outcomes[0]).to.include({ status: 'failed', error: 'two', attempts: 2 });
  });

  it('on engine.abort fails running steps, aborts their attempts and skips the rest', async () => {
    const wf = workflow([
      { name: 'a', agent: 'tier0_echo' },
      { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
      { name: 'c', agent: 'tier0_echo' },
      { name: 'd', agent: 'tier0_echo', depends_on: ['c'] },
    ]);
    const runner = manualRunner();
    const run = startGraph(wf, { runAttempt: runner.run });
    actor = run.actor;
    runner.started[1]!.resolve(ok({}));
    await flush();
    run.actor.send({ type: 'engine.abort', reason: 'cancelled' });
    const output = await run.done;
    expect(runner.started[0]!.signal.aborted).to.equal(true);
    expect(run.actor.getSnapshot().value).to.equal('aborted');
    expect(run.events).to.deep.equal([
      'started a #1',
      'started c #1',
      'finished c success',
      'started d #1',
      'finished a failed',
      'finished d failed',
      'finished b skipped (dependency failed: a)',
    ]);
    expect(output.outcomes.map((o) => o.status)).to.deep.equal([
      'failed',
      'skipped',
      'success',
      'failed',
    ]);
    expect(output.outcomes[0]!.error).to.equal('cancelled');
  });

  it('clears a pending retry timer when aborted', async () => {
    const wf = workflow([{ name: 'a', agent: 'tier0_echo', max_attempts: 2 }]);
    const runner = manualRunner();
    const clock = new TestClock(GRAPH_CLOCK_START);
    const run = startGraph(wf, { runAttempt: runner.run, clock });
    actor = run.actor;
    runner.started[0]!.resolve(failed('flaky'));
    await flush();
    expect(clock.pending()).to.equal(1);
    run.actor.send({ type: 'engine.abort', reason: 'run timed out' });
    const output = await run.done;
    expect(clock.pending()).to.equal(0);
    expect(output.outcomes[0]).to.include({ status: 'failed', error: 'run timed out' });
  });

  it('respects maxConcurrency, starting ready steps in YAML order', async () => {
    const wf = workflow([
      { name: 'a', agent: 'tier0_echo' },
      { name: 'b', agent: 'tier0_echo' },
      { name: 'c', agent: 'tier0_echo' },
    ]);
    const runner = manualRunner();
    const run = startGraph(wf, { runAttempt: runner.run, maxConcurrency: 1 });
    actor = run.actor;
    for (let i = 0; i < 3; i++) {
      expect(runner.started.length).to.equal(i + 1);
      runner.started[i]!.resolve(ok({}));
      await flush();
    }
    await run.done;
    expect(run.events).to.deep.equal([
      'started a #1',
      'finished a success',
      'started b #1',
      'finished b success',
      'started c #1',
      'finished c success',
    ]);
  });

  it('disposes in-flight attempts when the engine actor is stopped', async () => {
    const wf = workflow([{ name: 'a', agent: 'tier0_echo' }]);
    const runner = manualRunner();
    const run = startGraph(wf, { runAttempt: runner.run });
    run.actor.stop();
    await flush();
    expect(runner.started[0]!.signal.aborted).to.equal(true);
  });
});
