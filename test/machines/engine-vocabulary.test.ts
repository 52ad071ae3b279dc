// Both engines receive one internal event vocabulary (machines/scheduler/step-events.ts): the same
// types with the same fields for a settled attempt, a retry timer, a loop iteration and an
// approval wait, and each engine accepts the events the other would send.
import { expect } from 'chai';
import { createActor, type AnyActorLogic, type InspectionEvent } from 'xstate';
import type {
  AttemptResult,
  AttemptRunner,
  EngineInput,
  EngineOutput,
} from '../../machines/engine-contract.js';
import { STEP_EVENT_TYPES } from '../../machines/scheduler/step-events.js';
import { compileGraphLogic } from '../../src/engine/adapters/graph.js';
import { nativeAdapter } from '../../src/engine/adapters/native.js';
import type { CompiledWorkflow } from '../../src/workflow/types.js';
import { failed, GRAPH_CLOCK_START, manualRunner, ok, workflow } from './graph-helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

/** A step with tools (approval waits), a loop step that fails once (iteration, retry), a join. */
const wf = () =>
  workflow([
    { name: 'write', agent: 'tier0_tool', tools: ['file_write'] },
    {
      name: 'loop',
      agent: 'tier0_echo',
      loop_until: 'steps.loop.outputs.n == 2',
      max_attempts: 2,
    },
    { name: 'join', agent: 'tier0_echo', depends_on: ['write', 'loop'] },
  ]);

/** The attempts: `write` waits for approval and is approved; `loop` iterates, fails once. */
const runAttempt: AttemptRunner = ({ step, attempt, onApproval, onIteration, input }) => {
  if (step.name === 'write') {
    onApproval?.(true);
    onApproval?.(false);
    return Promise.resolve(ok({ written: true }));
  }
  if (step.name === 'loop') {
    onIteration?.(1, { n: 1 });
    return Promise.resolve(attempt === 1 ? failed('flaky') : ok({ n: 2 }));
  }
  return Promise.resolve(ok({ ...input }));
};

function input(workflowOf: CompiledWorkflow, clock: TestClock, run = runAttempt): EngineInput {
  return {
    runId: 'run-1',
    workflow: workflowOf,
    inputs: {},
    maxConcurrency: 10,
    maxAttempts: 1,
    runAttempt: run,
    retryDelayMs: () => 5,
    clock,
  };
}

/** Runs `logic` to the end; returns the events the engine actor received, as `type{fields}`. */
async function received(logic: AnyActorLogic, workflowOf: CompiledWorkflow) {
  const clock = new TestClock(GRAPH_CLOCK_START);
  const shapes: string[] = [];
  const actor = createActor(logic, {
    input: input(workflowOf, clock),
    inspect: (event: InspectionEvent) => {
      if (event.type !== '@xstate.event' || event.actorRef !== actor) return;
      const { type, ...fields } = event.event as { type: string };
      if (!type.startsWith('step.')) return;
      shapes.push(`${type}{${Object.keys(fields).sort().join(',')}}`);
    },
  });
  actor.subscribe(() => {
    if (clock.pending() > 0) setImmediate(() => clock.fireAll());
  });
  const output = new Promise<EngineOutput>((resolve, reject) =>
    actor.subscribe({
      complete: () => resolve((actor.getSnapshot() as { output?: unknown }).output as EngineOutput),
      error: reject,
    }),
  );
  actor.start();
  const done = await output;
  return { shapes: [...new Set(shapes)].sort(), output: done };
}

const engines = {
  native: (w: CompiledWorkflow) => nativeAdapter.createLogic(w) as AnyActorLogic,
  graph: (w: CompiledWorkflow) => compileGraphLogic(w) as unknown as AnyActorLogic,
};

describe('one internal event vocabulary for both engines', () => {
  it('both engines receive the same step event types with the same fields', async () => {
    const expected = [
      'step.approval{attempt,index,waiting}',
      'step.iteration{attempt,index,iteration,output}',
      'step.retry{index}',
      'step.settled{attempt,index,result}',
    ];
    expect([...STEP_EVENT_TYPES].sort()).to.deep.equal(expected.map((s) => s.split('{')[0]));
    for (const [name, logicOf] of Object.entries(engines)) {
      const { shapes, output } = await received(logicOf(wf()), wf());
      expect(shapes, name).to.deep.equal(expected);
      expect(
        output.outcomes.map((o) => `${o.status}/${o.attempts}`),
        name,
      ).to.deep.equal(['success/1', 'success/2', 'success/1']);
    }
  });

  it('each engine accepts a step event in the shared shape sent from outside', async () => {
    // A step whose attempt never settles by itself: the test sends its `step.settled`.
    const one = workflow([{ name: 'a', agent: 'tier0_echo' }]);
    for (const [name, logicOf] of Object.entries(engines)) {
      const runner = manualRunner();
      const clock = new TestClock(GRAPH_CLOCK_START);
      const actor = createActor(logicOf(one), { input: input(one, clock, runner.run) });
      const output = new Promise<EngineOutput>((resolve) =>
        actor.subscribe({
          complete: () =>
            resolve((actor.getSnapshot() as { output?: unknown }).output as EngineOutput),
        }),
      );
      actor.start();
      await new Promise((resolve) => setImmediate(resolve));
      expect(
        runner.started.map((a) => a.step),
        name,
      ).to.deep.equal(['a']);
      const result: AttemptResult = ok({ from: 'outside' });
      actor.send({ type: 'step.settled', index: 0, attempt: 1, result });
      const done = await output;
      expect(done.outcomes[0]!.status, name).to.equal('success');
      expect(done.outcomes[0]!.output, name).to.deep.equal({ from: 'outside' });
    }
  });
});
