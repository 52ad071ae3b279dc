/**
 * Engine seeding (`EngineInput.seed`, machines/engine-contract.ts) on both engines: a run that
 * starts with some steps finished (a resumed run, a forked run) does not run them again, reads
 * their outputs as if they had just run, and retries a step whose attempt was interrupted.
 * Each case runs on the native scheduler and on the graph machine and expects the same events.
 */
import { expect } from 'chai';
import { createActor } from 'xstate';
import {
  forEachEngineEvent,
  STEP_INTERRUPTED,
  type AttemptResult,
  type EngineEmitted,
  type EngineEvent,
  type EngineInput,
  type EngineOutput,
  type EngineSeed,
  type StepOutcome,
} from '../../machines/engine-contract.js';
import { createGraphAdapter } from '../../src/engine/adapters/graph.js';
import { nativeAdapter } from '../../src/engine/adapters/native.js';
import type { EngineAdapter } from '../../src/engine/adapter.js';
import { compileWorkflow } from '../../src/workflow/index.js';
import type { CompiledWorkflow, StepDocument } from '../../src/workflow/types.js';
import { TestClock } from '../fixtures/test-clock.js';
import type { Agent } from '../../src/agents/types.js';
import { createRuntime } from '../../src/engine/runtime.js';
import { internalsOf } from '../../src/engine/runtime-internals.js';
import type { Runtime, WorkflowEvent } from '../../src/engine/types.js';
import { CLOCK_START, removeDir, runFiles, sequence, tempDir, validateRecord } from './helpers.js';

const ADAPTERS: readonly EngineAdapter[] = [nativeAdapter, createGraphAdapter()];

function workflow(steps: StepDocument[]): CompiledWorkflow {
  return compileWorkflow({
    name: 'seeded',
    outputs: { last: { from: '${steps.d.outputs}' }, note: { from: '${context.note}' } },
    steps,
  });
}

/** a → b → (c when a said go) → d; b writes `note` into the context. */
const DIAMOND: StepDocument[] = [
  { name: 'a', agent: 'tier1_echo', inputs: { go: '${inputs.go}' } },
  { name: 'b', agent: 'tier1_echo', depends_on: ['a'], outputs: { said: 'note' } },
  {
    name: 'c',
    agent: 'tier1_echo',
    depends_on: ['b'],
    when: 'steps.a.outputs.go == true',
    inputs: { note: '${context.note}' },
  },
  { name: 'd', agent: 'tier1_echo', depends_on: ['b', 'c'], inputs: { from: 'd' } },
];

function success(output: Record<string, unknown>, attempts = 1): StepOutcome {
  return {
    status: 'success',
    input: {},
    output,
    error: null,
    skipReason: null,
    modelUsed: 'earlier',
    tokensUsed: { input: 3, output: 4, total: 7 },
    attempts,
    iterations: 1,
    startTime: CLOCK_START - 50,
    endTime: CLOCK_START - 40,
  };
}

function failure(error: string): StepOutcome {
  return { ...success({}), status: 'failed', output: null, error };
}

interface Ran {
  output: EngineOutput;
  events: EngineEvent[];
  /** `step#attempt` of every attempt the runner was called for. */
  calls: string[];
}

/** Runs `wf` on `adapter` with `seed`; attempts echo their input, or fail when `fails` says so. */
async function run(
  adapter: EngineAdapter,
  wf: CompiledWorkflow,
  seed: EngineSeed | undefined,
  options: { maxAttempts?: number; fails?: (step: string, attempt: number) => boolean } = {},
): Promise<Ran> {
  const clock = new TestClock(CLOCK_START);
  const calls: string[] = [];
  const events: EngineEvent[] = [];
  const input: EngineInput = {
    runId: 'seeded-run',
    workflow: wf,
    inputs: { go: true },
    maxConcurrency: 4,
    maxAttempts: options.maxAttempts ?? 1,
    runAttempt: ({ step, input: stepInput, attempt }) => {
      calls.push(`${step.name}#${attempt}`);
      const result: AttemptResult =
        options.fails?.(step.name, attempt) === true
          ? {
              ok: false,
              output: null,
              error: 'boom',
              modelUsed: null,
              tokensUsed: null,
              iterations: 1,
            }
          : {
              ok: true,
              output: { ...stepInput, said: `${step.name} said hi` },
              error: null,
              modelUsed: null,
              tokensUsed: null,
              iterations: 1,
            };
      return Promise.resolve(result);
    },
    retryDelayMs: () => 0,
    clock,
    seed,
  };
  const actor = createActor(adapter.createLogic(wf), { input });
  actor.on('*', (emitted: EngineEmitted) =>
    forEachEngineEvent(emitted, (event) => events.push(event)),
  );
  const done = new Promise<EngineOutput>((resolve, reject) =>
    actor.subscribe({
      next: (snapshot: { status: string; output?: unknown }) => {
        if (snapshot.status === 'done') resolve(snapshot.output as EngineOutput);
      },
      error: reject,
    }),
  );
  actor.start();
  // Retry delays of 0 ms wait on the simulated clock: move it while the run is not done.
  let finished = false;
  void done.then(
    () => (finished = true),
    () => (finished = true),
  );
  while (!finished) {
    await new Promise((resolve) => setImmediate(resolve));
    clock.increment(1);
  }
  return { output: await done, events, calls };
}

/** `step.finished:<name>=<status>[ seeded]` / `step.started:<name>#<attempt>`, in order. */
function trace(wf: CompiledWorkflow, events: readonly EngineEvent[]): string[] {
  return events.flatMap((event) => {
    const name = wf.steps[event.index]!.name;
    if (event.type === 'step.started') return [`started:${name}#${event.attempt}`];
    if (event.type === 'step.finished')
      return [`finished:${name}=${event.outcome.status}${event.seeded ? ' seeded' : ''}`];
    return [];
  });
}

describe('engine seeding (both engines)', () => {
  for (const adapter of ADAPTERS) {
    describe(`${adapter.name} engine`, () => {
      it('does not run seeded steps; their outputs, context writes and when: act as if they had just run', async () => {
        const wf = workflow(DIAMOND);
        const seed: EngineSeed = {
          steps: new Map([
            ['a', success({ go: true })],
            ['b', success({ said: 'b said earlier' }, 2)],
          ]),
        };
        const { output, events, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal(['c#1', 'd#1']);
        expect(trace(wf, events)).to.deep.equal([
          'finished:a=success seeded',
          'finished:b=success seeded',
          'started:c#1',
          'finished:c=success',
          'started:d#1',
          'finished:d=success',
        ]);
        // The seeded outcomes are reported as given; c saw b's context write.
        expect(output.outcomes[1]).to.deep.equal(seed.steps.get('b'));
        expect(output.outcomes[2]!.input).to.deep.equal({ note: 'b said earlier' });
        expect(output.context).to.deep.equal({ note: 'b said earlier' });
        expect(output.finalOutput).to.deep.equal({
          last: { from: 'd', said: 'd said hi' },
          note: 'b said earlier',
        });
      });

      it('evaluates a when: on a seeded output: false skips the step, its dependents still run', async () => {
        const wf = workflow(DIAMOND);
        const seed: EngineSeed = {
          steps: new Map([
            ['a', success({ go: false })],
            ['b', success({ said: 'x' })],
          ]),
        };
        const { events, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal(['d#1']);
        expect(trace(wf, events)).to.deep.equal([
          'finished:a=success seeded',
          'finished:b=success seeded',
          'finished:c=skipped',
          'started:d#1',
          'finished:d=success',
        ]);
      });

      it('releases the dependents of a step seeded as skipped by a false when:', async () => {
        const wf = workflow(DIAMOND);
        const skipped: StepOutcome = {
          ...success({}),
          status: 'skipped',
          output: null,
          skipReason: 'condition false',
          attempts: 0,
          startTime: null,
        };
        const seed: EngineSeed = {
          steps: new Map([
            ['a', success({ go: false })],
            ['b', success({ said: 'x' })],
            ['c', skipped],
          ]),
        };
        const { events, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal(['d#1']);
        expect(trace(wf, events).slice(-2)).to.deep.equal(['started:d#1', 'finished:d=success']);
      });

      it('skips the dependents of a step seeded as failed', async () => {
        const wf = workflow(DIAMOND);
        const seed: EngineSeed = {
          steps: new Map([
            ['a', success({ go: true })],
            ['b', failure('earlier failure')],
          ]),
        };
        const { output, events, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal([]);
        expect(trace(wf, events)).to.deep.equal([
          'finished:a=success seeded',
          'finished:b=failed seeded',
          'finished:c=skipped',
          'finished:d=skipped',
        ]);
        expect(output.outcomes.map((o) => o.skipReason)).to.deep.equal([
          null,
          null,
          'dependency failed: b',
          'dependency failed: b',
        ]);
      });

      it('finishes at once when every step is seeded', async () => {
        const wf = workflow(DIAMOND);
        const seed: EngineSeed = {
          steps: new Map(wf.steps.map((step) => [step.name, success({ said: step.name })])),
        };
        const { output, calls, events } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal([]);
        expect(events.every((e) => e.type === 'step.finished' && e.seeded === true)).to.equal(true);
        expect(output.finalOutput).to.deep.equal({ last: { said: 'd' }, note: 'b' });
      });

      it('makes an interrupted attempt again, from the next attempt number', async () => {
        const wf = workflow(DIAMOND.map((s) => (s.name === 'b' ? { ...s, max_attempts: 3 } : s)));
        const seed: EngineSeed = {
          steps: new Map([['a', success({ go: true })]]),
          attempts: new Map([['b', 1]]),
        };
        const { output, events, calls } = await run(adapter, wf, seed, {
          fails: (step, attempt) => step === 'b' && attempt === 2,
        });
        expect(calls).to.deep.equal(['b#2', 'b#3', 'c#1', 'd#1']);
        expect(trace(wf, events).slice(0, 4)).to.deep.equal([
          'finished:a=success seeded',
          'started:b#2',
          'started:b#3',
          'finished:b=success',
        ]);
        expect(output.outcomes[1]!.attempts).to.equal(3);
      });

      it('does not count an interruption as a failure: max_attempts failures are still allowed', async () => {
        // max_attempts 2, attempt 2 interrupted after attempt 1 failed: one more failure allowed.
        const wf = workflow(DIAMOND.map((s) => (s.name === 'b' ? { ...s, max_attempts: 2 } : s)));
        const seed: EngineSeed = {
          steps: new Map([['a', success({ go: true })]]),
          attempts: new Map([['b', 2]]),
        };
        const { output, calls } = await run(adapter, wf, seed, {
          fails: (step) => step === 'b',
        });
        expect(calls).to.deep.equal(['b#3']);
        expect(output.outcomes[1]).to.include({ status: 'failed', error: 'boom', attempts: 3 });
      });

      it('makes the interrupted attempt of a step with the default max_attempts once more', async () => {
        const wf = workflow(DIAMOND);
        const seed: EngineSeed = {
          steps: new Map([['a', success({ go: true })]]),
          attempts: new Map([['b', 1]]),
        };
        const { output, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal(['b#2', 'c#1', 'd#1']);
        expect(output.outcomes[1]).to.include({ status: 'success', attempts: 2 });
      });

      it('fails a step interrupted more times than its max_attempts with interrupted', async () => {
        const wf = workflow(DIAMOND.map((s) => (s.name === 'b' ? { ...s, max_attempts: 2 } : s)));
        const seed: EngineSeed = {
          steps: new Map([['a', success({ go: true })]]),
          attempts: new Map([['b', 3]]),
          interruptions: new Map([['b', 3]]),
        };
        const { output, events, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal([]);
        expect(trace(wf, events)).to.deep.equal([
          'finished:a=success seeded',
          'finished:b=failed',
          'finished:c=skipped',
          'finished:d=skipped',
        ]);
        expect(output.outcomes[1]).to.include({
          status: 'failed',
          error: STEP_INTERRUPTED,
          attempts: 3,
        });
      });

      it('fails an interrupted step with resume: fail instead of running it again', async () => {
        const wf = workflow(
          DIAMOND.map((s) => (s.name === 'b' ? { ...s, max_attempts: 5, resume: 'fail' } : s)),
        );
        const seed: EngineSeed = {
          steps: new Map([['a', success({ go: true })]]),
          attempts: new Map([['b', 1]]),
        };
        const { output, calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal([]);
        expect(output.outcomes[1]).to.include({
          status: 'failed',
          error: 'interrupted',
          attempts: 1,
        });
        expect(output.outcomes[3]!.skipReason).to.equal('dependency failed: b');
      });

      it('runs a resume: fail step normally when it was not interrupted', async () => {
        const wf = workflow(DIAMOND.map((s) => (s.name === 'b' ? { ...s, resume: 'fail' } : s)));
        const seed: EngineSeed = { steps: new Map([['a', success({ go: true })]]) };
        const { calls } = await run(adapter, wf, seed);
        expect(calls).to.deep.equal(['b#1', 'c#1', 'd#1']);
      });
    });
  }

  it('gives the same events on both engines', async () => {
    const wf = workflow(DIAMOND.map((s) => (s.name === 'c' ? { ...s, max_attempts: 2 } : s)));
    const seed: EngineSeed = {
      steps: new Map([
        ['a', success({ go: true })],
        ['b', success({ said: 'kept' })],
      ]),
      attempts: new Map([['c', 1]]),
    };
    const [native, graph] = await Promise.all(ADAPTERS.map((a) => run(a, wf, seed)));
    expect(graph!.events).to.deep.equal(native!.events);
    expect(graph!.output).to.deep.equal(native!.output);
  });
});

describe('a seeded run through the runtime (both engines)', () => {
  for (const adapterName of ['native', 'graph'] as const) {
    describe(`${adapterName} engine`, () => {
      let runsDir: string;
      let runtime: Runtime | undefined;
      beforeEach(async () => (runsDir = await tempDir()));
      afterEach(async () => {
        await runtime?.shutdown();
        runtime = undefined;
        await removeDir(runsDir);
      });

      it('keeps the seeded steps in the events and the run file and runs only the rest', async () => {
        const called: string[] = [];
        const agents: Record<string, Agent> = {
          tier1_echo: ({ input, step }) => {
            called.push(step.name);
            return Promise.resolve({
              output: { ...input, said: step.name },
              modelUsed: null,
              tokensUsed: null,
            });
          },
        };
        runtime = createRuntime({ runsDir, noLlm: true, defaultAdapter: adapterName, agents });
        const yaml = [
          'name: seeded_chain',
          'steps:',
          '  - { name: a, agent: tier1_echo, inputs: { x: 1 }, outputs: { said: note } }',
          "  - { name: b, agent: tier1_echo, depends_on: [a], inputs: { note: '${context.note}' } }",
        ].join('\n');
        const seed: EngineSeed = { steps: new Map([['a', success({ x: 1, said: 'earlier' })]]) };
        const handle = await internalsOf(runtime)!.startSeeded({ workflow: yaml }, seed);
        const events: WorkflowEvent[] = [];
        for await (const event of handle.events) events.push(event);
        const record = await handle.done;
        expect(called).to.deep.equal(['b']);
        expect(sequence(events, true)).to.deep.equal([
          'workflow_start',
          // A seeded step that ran has its step_start too, sent with its step_end.
          'step_start:a',
          'step_end:a=success',
          'step_start:b',
          'step_end:b=success',
          'workflow_end=success',
        ]);
        expect(record.status).to.equal('success');
        expect(record.steps.map((s) => [s.step_name, s.status, s.output])).to.deep.equal([
          ['a', 'success', { x: 1, said: 'earlier' }],
          ['b', 'success', { note: 'earlier', said: 'b' }],
        ]);
        const files = await runFiles(runsDir);
        expect(files).to.have.length(1);
        expect(validateRecord(files[0]!.record), JSON.stringify(validateRecord.errors)).to.equal(
          true,
        );
        expect(files[0]!.record.steps).to.deep.equal(record.steps);
      });
    });
  }
});
