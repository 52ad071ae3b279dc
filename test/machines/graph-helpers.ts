// Shared fixtures of the graph machine tests: workflows, the clock's start, controllable attempts.
import { createActor, type Actor } from 'xstate';
import type {
  AttemptResult,
  AttemptRunner,
  EngineEmitted,
  EngineEvent,
  EngineInput,
  EngineOutput,
} from '../../machines/engine-contract.js';
import { forEachEngineEvent } from '../../machines/engine-contract.js';
import { compileGraphLogic } from '../../src/engine/adapters/graph.js';
import type { GraphMachine } from '../../machines/graph.machine.js';
import { compileWorkflow } from '../../src/workflow/index.js';
import { TestClock } from '../fixtures/test-clock.js';
import type { CompiledWorkflow, StepDocument } from '../../src/workflow/types.js';

export function workflow(
  steps: StepDocument[],
  outputs?: Record<string, { from: unknown }>,
): CompiledWorkflow {
  return compileWorkflow({
    name: 'wf',
    ...(outputs ? { outputs } : {}),
    steps,
  });
}

/** Where the graph tests' clock starts (epoch ms). */
export const GRAPH_CLOCK_START = 1_000;

export const ok = (output: Record<string, unknown>): AttemptResult => ({
  ok: true,
  output,
  error: null,
  modelUsed: null,
  tokensUsed: null,
  iterations: 1,
});
export const failed = (error: string): AttemptResult => ({
  ok: false,
  output: null,
  error,
  modelUsed: null,
  tokensUsed: null,
  iterations: 1,
});

/** An attempt the test settles by hand. */
export interface PendingAttempt {
  step: string;
  attempt: number;
  input: Record<string, unknown>;
  signal: AbortSignal;
  resolve: (result: AttemptResult) => void;
}

/** A runner whose attempts wait for the test; `started` lists them in start order. */
export function manualRunner(): { run: AttemptRunner; started: PendingAttempt[] } {
  const started: PendingAttempt[] = [];
  const run: AttemptRunner = ({ step, input, attempt, signal }) =>
    new Promise<AttemptResult>((resolve) => {
      started.push({ step: step.name, attempt, input, signal, resolve });
    });
  return { run, started };
}

/** A runner that echoes the step input at once (as `tier0_echo` would). */
export const echoRunner: AttemptRunner = ({ input }) => Promise.resolve(ok({ ...input }));

export interface Started {
  actor: Actor<GraphMachine>;
  events: string[];
  raw: EngineEvent[];
  done: Promise<EngineOutput>;
}

/** Starts the graph engine for `wf` and records its events as short strings. */
export function startGraph(wf: CompiledWorkflow, overrides: Partial<EngineInput> = {}): Started {
  const input: EngineInput = {
    runId: 'run-1',
    workflow: wf,
    inputs: {},
    maxConcurrency: 10,
    maxAttempts: 1,
    runAttempt: echoRunner,
    retryDelayMs: () => 5,
    clock: new TestClock(GRAPH_CLOCK_START),
    ...overrides,
  };
  const actor = createActor(compileGraphLogic(wf) as unknown as GraphMachine, { input });
  const events: string[] = [];
  const raw: EngineEvent[] = [];
  actor.on('*', (emitted: EngineEmitted) => forEachEngineEvent(emitted, record));
  function record(event: EngineEvent): void {
    raw.push(event);
    const name = wf.steps[event.index]!.name;
    if (event.type === 'step.finished') {
      const o = event.outcome;
      events.push(`finished ${name} ${o.status}${o.skipReason ? ` (${o.skipReason})` : ''}`);
    } else if (event.type === 'step.started') events.push(`started ${name} #${event.attempt}`);
    else if (event.type === 'step.retrying') events.push(`retrying ${name} #${event.attempt}`);
    else events.push(`iteration ${name} ${event.iteration}`);
  }
  const done = new Promise<EngineOutput>((resolve, reject) => {
    actor.subscribe({
      next: (snapshot) => {
        if (snapshot.status === 'done') resolve(snapshot.output);
      },
      error: reject,
    });
  });
  actor.start();
  return { actor, events, raw, done };
}
