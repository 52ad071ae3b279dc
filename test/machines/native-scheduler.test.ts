import { expect } from 'chai';
import { createActor, type AnyActorRef } from 'xstate';
import {
  forEachEngineEvent,
  type EngineEmitted,
  type EngineEvent,
  type EngineInput,
  type EngineOutput,
} from '../../machines/engine-contract.js';
import { nativeAdapter } from '../../src/engine/adapters/native.js';
import { engineInput, failed, ok, workflowOf } from './fixtures.js';
import { TestClock } from '../fixtures/test-clock.js';

interface Observed {
  actor: AnyActorRef;
  events: EngineEvent[];
  done: Promise<EngineOutput>;
}

function start(input: EngineInput): Observed {
  const events: EngineEvent[] = [];
  const actor = createActor(nativeAdapter.createLogic(input.workflow), { input });
  // The events of one transition arrive as one `engine.batch`.
  actor.on('*', (emitted: EngineEmitted) =>
    forEachEngineEvent(emitted, (event) => events.push(event)),
  );
  const done = new Promise<EngineOutput>((resolve, reject) => {
    actor.subscribe({
      next: (snapshot: { status: string; output?: unknown }) => {
        if (snapshot.status === 'done') resolve(snapshot.output as EngineOutput);
      },
      error: reject,
    });
  });
  actor.start();
  return { actor, events, done };
}

const finishedOrder = (events: EngineEvent[]) =>
  events.flatMap((e) => (e.type === 'step.finished' ? [`s${e.index}:${e.outcome.status}`] : []));

describe('native scheduler actor', () => {
  it('starts ready steps in YAML order up to the concurrency limit', async () => {
    const pending: (() => void)[] = [];
    const started: number[] = [];
    const workflow = workflowOf([[], [], [], [], []]);
    const { done, events } = start(
      engineInput(workflow, {
        maxConcurrency: 2,
        runAttempt: ({ step }) =>
          new Promise((resolve) => {
            started.push(step.index);
            pending.push(() => resolve(ok()));
          }),
      }),
    );
    expect(started).to.deep.equal([0, 1]);
    pending.shift()!();
    await Promise.resolve();
    await Promise.resolve();
    expect(started).to.deep.equal([0, 1, 2]);
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const output = await done;
    expect(started).to.deep.equal([0, 1, 2, 3, 4]);
    expect(output.outcomes.map((o) => o.status)).to.deep.equal(Array(5).fill('success'));
    expect(events.filter((e) => e.type === 'step.finished')).to.have.length(5);
  });

  it('writes step outputs into context variables and resolves the workflow outputs', async () => {
    const workflow = workflowOf([[], [0]], (i) => (i === 0 ? { outputs: { i: 'first' } } : {}));
    const output = await start(engineInput(workflow)).done;
    expect(output.context).to.deep.equal({ first: 0 });
    expect(output.finalOutput).to.deep.equal({ last: { i: 1 } });
  });

  it('skips a step whose when is false; its dependents still run', async () => {
    const workflow = workflowOf([[], [0], [1]], (i) => (i === 1 ? { when: () => false } : {}));
    const { done, events } = start(engineInput(workflow));
    const output = await done;
    expect(finishedOrder(events)).to.deep.equal(['s0:success', 's1:skipped', 's2:success']);
    expect(output.outcomes[1]).to.include({ skipReason: 'condition false', attempts: 0 });
  });

  it('finishes inside start when every step is skipped', async () => {
    const workflow = workflowOf([[], [0]], () => ({ when: () => 0 }));
    const output = await start(engineInput(workflow)).done;
    expect(output.outcomes.map((o) => o.skipReason)).to.deep.equal([
      'condition false',
      'condition false',
    ]);
  });

  it('skips the transitive dependents of a failed step, in YAML order', async () => {
    const workflow = workflowOf([[], [0], [1], [0], []]);
    const { done, events } = start(
      engineInput(workflow, {
        runAttempt: ({ step }) => Promise.resolve(step.index === 0 ? failed('bad') : ok()),
      }),
    );
    const output = await done;
    expect(finishedOrder(events)).to.deep.equal([
      's0:failed',
      's1:skipped',
      's2:skipped',
      's3:skipped',
      's4:success',
    ]);
    expect(output.outcomes[2]!.skipReason).to.equal('dependency failed: s0');
  });

  it('retries after the backoff delay from the clock, emitting step.retrying', async () => {
    const clock = new TestClock();
    let calls = 0;
    const { done, events } = start(
      engineInput(workflowOf([[]]), {
        clock,
        maxAttempts: 3,
        retryDelayMs: (attempt) => attempt * 100,
        runAttempt: () => Promise.resolve(++calls < 3 ? failed(`f${calls}`) : ok()),
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).to.equal(1);
    expect(events.at(-1)).to.include({ type: 'step.retrying', attempt: 1, delayMs: 100 });
    clock.increment(99);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).to.equal(1);
    clock.increment(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).to.equal(2);
    clock.increment(200);
    const output = await done;
    expect(output.outcomes[0]).to.include({ status: 'success', attempts: 3 });
    expect(events.map((e) => e.type)).to.deep.equal([
      'step.started',
      'step.retrying',
      'step.started',
      'step.retrying',
      'step.started',
      'step.finished',
    ]);
  });

  it('treats a runner that throws or rejects as a failed attempt', async () => {
    const workflow = workflowOf([[], []]);
    const output = await start(
      engineInput(workflow, {
        runAttempt: ({ step }) => {
          if (step.index === 0) throw new Error('sync throw');
          return Promise.reject(new Error('async reject'));
        },
      }),
    ).done;
    expect(output.outcomes.map((o) => o.error)).to.deep.equal(['sync throw', 'async reject']);
  });

  it('on engine.abort fails running steps, aborts their signal, skips the rest and completes', async () => {
    const clock = new TestClock();
    const signals: AbortSignal[] = [];
    const workflow = workflowOf([[], [0], []]);
    const { actor, done, events } = start(
      engineInput(workflow, {
        clock,
        maxAttempts: 2,
        runAttempt: ({ step, signal }) => {
          signals.push(signal);
          return step.index === 2 ? Promise.resolve(failed('retry me')) : new Promise(() => {});
        },
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.pending()).to.equal(1);
    actor.send({ type: 'engine.abort', reason: 'run timed out' });
    const output = await done;
    expect(signals[0]!.aborted).to.equal(true);
    expect(clock.pending()).to.equal(0);
    expect(output.outcomes.map((o) => [o.status, o.error ?? o.skipReason])).to.deep.equal([
      ['failed', 'run timed out'],
      ['skipped', 'dependency failed: s0'],
      ['failed', 'run timed out'],
    ]);
    expect(finishedOrder(events)).to.deep.equal(['s0:failed', 's2:failed', 's1:skipped']);
  });

  it('ignores results that arrive after an abort', async () => {
    let release!: () => void;
    const { actor, done } = start(
      engineInput(workflowOf([[]]), {
        runAttempt: () => new Promise((resolve) => (release = () => resolve(ok()))),
      }),
    );
    actor.send({ type: 'engine.abort', reason: 'cancelled' });
    release();
    const output = await done;
    expect(output.outcomes[0]).to.include({ status: 'failed', error: 'cancelled' });
  });

  it('emits step.iteration through the runner callback while the attempt runs', async () => {
    const workflow = workflowOf([[]], () => ({ loopUntil: () => true }));
    const { done, events } = start(
      engineInput(workflow, {
        runAttempt: ({ onIteration }) => {
          onIteration?.(1, { n: 1 });
          return Promise.resolve({ ...ok({ n: 2 }), iterations: 2 });
        },
      }),
    );
    await done;
    expect(events.map((e) => e.type)).to.deep.equal([
      'step.started',
      'step.iteration',
      'step.finished',
    ]);
  });

  it('exposes a serialisable persisted snapshot with step states', async () => {
    const { actor, done } = start(engineInput(workflowOf([[], [0]])));
    await done;
    const persisted = actor.getPersistedSnapshot() as unknown as { steps: Record<string, string> };
    expect(persisted.steps).to.deep.equal({ s0: 'success', s1: 'success' });
  });

  it('starts attempts in start, and later ones only after the transition is committed', async () => {
    const workflow = workflowOf([[], [0]]);
    const started: number[] = [];
    const logic = nativeAdapter.createLogic(workflow);
    const input = engineInput(workflow, {
      runAttempt: ({ step }) => {
        started.push(step.index);
        return Promise.resolve(ok());
      },
    });
    const deferred: (() => void)[] = [];
    const sent: unknown[] = [];
    const scope = {
      self: { send: (event: unknown) => sent.push(event) },
      defer: (fn: () => void) => deferred.push(fn),
      emit: () => undefined,
    } as unknown as Parameters<typeof logic.transition>[2];
    const snapshot = logic.getInitialSnapshot(scope, input);
    logic.start!(snapshot, scope);
    expect(started).to.deep.equal([0]);
    await Promise.resolve();
    const result = sent.find((e) => (e as { type: string }).type === 'step.settled')!;
    logic.transition(snapshot, result as { type: string }, scope);
    // The dependent's attempt waits for XState to run the transition's deferred effects.
    expect(started).to.deep.equal([0]);
    expect(deferred).to.have.length(1);
    deferred.shift()!();
    expect(started).to.deep.equal([0, 1]);
  });

  it("hands every engine event to the input's observer, in order, before listeners", async () => {
    const seen: string[] = [];
    const workflow = workflowOf([[], [0]]);
    const { done, events } = start(
      engineInput(workflow, { observer: (event) => seen.push(`${event.type}:${event.index}`) }),
    );
    await done;
    expect(seen).to.deep.equal(events.map((event) => `${event.type}:${event.index}`));
    expect(seen).to.have.length(4);
  });
});
