import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createActor, type AnyStateMachine } from 'xstate';
import type { AttemptRunner, EngineInput, EngineOutput } from '../../machines/engine-contract.js';
import { compileGraphLogic } from '../../src/engine/adapters/graph.js';
import type { StepDocument } from '../../src/workflow/types.js';
import { GRAPH_CLOCK_START, ok, workflow } from './graph-helpers.js';
import { TestClock } from '../fixtures/test-clock.js';

// A full GC on demand without starting node with --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function fanOut(n: number) {
  const leaves: StepDocument[] = Array.from({ length: n }, (_, i) => ({
    name: `f${i}`,
    agent: 'tier0_echo',
    depends_on: ['root'],
  }));
  return workflow([
    { name: 'root', agent: 'tier0_echo' },
    ...leaves,
    { name: 'join', agent: 'tier0_echo', depends_on: leaves.map((s) => s.name) },
  ]);
}

/** Settles attempts after 0–3 extra microtask hops: completion order varies between steps. */
const varied: AttemptRunner = async ({ step, attempt }) => {
  for (let hop = (step.index * 7 + attempt) % 4; hop > 0; hop--) await Promise.resolve();
  return ok({ step: step.name });
};

function heapMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

describe('graph machine memory', () => {
  it('keeps the heap flat over 100 runs of a 1,000-step fan-out (nothing grows per node × event type)', async () => {
    const wf = fanOut(1000);
    const logic = compileGraphLogic(wf) as unknown as AnyStateMachine;
    const runOnce = () => {
      const input: EngineInput = {
        runId: 'mem',
        workflow: wf,
        inputs: {},
        maxConcurrency: 2000,
        maxAttempts: 1,
        runAttempt: varied,
        retryDelayMs: () => 0,
        clock: new TestClock(GRAPH_CLOCK_START),
      };
      const actor = createActor(logic, { input });
      const done = new Promise<EngineOutput>((resolve, reject) =>
        actor.subscribe({
          complete: () => resolve(actor.getSnapshot().output as EngineOutput),
          error: reject,
        }),
      );
      actor.start();
      return done;
    };
    const heap: number[] = [];
    for (let run = 1; run <= 100; run++) {
      const output = await runOnce();
      expect(output.outcomes).to.have.length(1002);
      if (run === 10 || run === 100) heap.push(heapMiB());
    }
    // 90 runs after warm-up: a per-(node × event type) cache would add megabytes here.
    expect(
      heap[1]! - heap[0]!,
      `heap after run 10 and 100: ${heap.map((h) => h.toFixed(2)).join(', ')} MiB`,
    ).to.be.below(1);
  });
});
