/**
 * What both engines know of a run's unfinished steps (`SchedulerCore.facts`, read through the
 * engine actor's snapshot): the same facts, on a simulated clock, for a run with a step skipped
 * by a false `when:`, one waiting for its retry, one running, one held by the concurrency limit
 * and one waiting for a dependency.
 */
import { expect } from 'chai';
import { createActor, waitFor, type AnyActorRef } from 'xstate';
import type { EngineFacts } from '../../machines/scheduler/step-waits.js';
import { engineFactSource } from '../../machines/scheduler/step-waits.js';
import { createGraphAdapter } from '../../src/engine/adapters/graph.js';
import { nativeAdapter } from '../../src/engine/adapters/native.js';
import type { EngineAdapter } from '../../src/engine/adapter.js';
import { TestClock } from '../fixtures/test-clock.js';
import { engineInput, failed, workflowOf } from './fixtures.js';

const ENGINES: [string, () => EngineAdapter][] = [
  ['native', () => nativeAdapter],
  ['graph', () => createGraphAdapter()],
];

function factsOf(actor: AnyActorRef): EngineFacts {
  const source = engineFactSource(actor.getSnapshot());
  expect(source, 'the engine snapshot holds the scheduler core').to.not.equal(undefined);
  return source!.facts();
}

describe('engine facts (what explain reads), both engines', () => {
  const answers: EngineFacts[] = [];

  for (const [name, adapterOf] of ENGINES) {
    it(`${name}: reports each unfinished step's state and what it waits for`, async () => {
      const clock = new TestClock(1_000_000);
      // s0: when false; s1: fails, retried; s2: runs; s3: held (2 at once); s4: after s1.
      const workflow = workflowOf([[], [], [], [], [1]], (i) =>
        i === 0
          ? {
              when: (scope) => scope.inputs.mode === 'deep',
              whenReferences: { inputs: ['mode'], steps: [], context: [] },
            }
          : i === 1
            ? { maxAttempts: 3 }
            : {},
      );
      const input = engineInput(workflow, {
        inputs: { mode: 'quick' },
        maxConcurrency: 2,
        clock,
        retryDelayMs: () => 5_000,
        runAttempt: ({ step }) =>
          step.index === 1 ? Promise.resolve(failed('boom')) : new Promise(() => undefined),
      });
      const actor = createActor(adapterOf().createLogic(workflow), { input });
      actor.subscribe({ error: () => undefined });
      actor.start();
      await waitFor(actor, () => factsOf(actor).steps.some((s) => s.status === 'retrying'));
      clock.increment(1_500);
      const facts = factsOf(actor);
      actor.stop();
      expect(facts).to.deep.include({
        runId: 'r1',
        workflow: 'fixture',
        now: 1_001_500,
        running: 2,
        maxConcurrency: 2,
        finished: 1,
        total: 5,
      });
      const base = {
        attempt: 0,
        maxAttempts: 1,
        attemptStartedAt: null,
        waitingFor: [],
        ready: false,
        retryAt: null,
        conditionValues: null,
        skipReason: null,
        error: null,
      };
      expect(facts.steps).to.deep.equal([
        {
          ...base,
          index: 0,
          name: 's0',
          status: 'skipped',
          conditionValues: { 'inputs.mode': 'quick' },
          skipReason: 'condition false',
        },
        {
          ...base,
          index: 1,
          name: 's1',
          status: 'retrying',
          attempt: 1,
          maxAttempts: 3,
          attemptStartedAt: 1_000_000,
          retryAt: 1_005_000,
        },
        {
          ...base,
          index: 2,
          name: 's2',
          status: 'running',
          attempt: 1,
          attemptStartedAt: 1_000_000,
        },
        { ...base, index: 3, name: 's3', status: 'pending', ready: true },
        {
          ...base,
          index: 4,
          name: 's4',
          status: 'pending',
          waitingFor: [{ step: 's1', status: 'retrying' }],
        },
      ]);
      answers.push(facts);
    });
  }

  it('gives the same facts on both engines', () => {
    expect(answers).to.have.length(2);
    expect(answers[0]).to.deep.equal(answers[1]);
  });
});
