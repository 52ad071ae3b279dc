/**
 * The seed of a fork (`forkSeed`, src/engine/rerun.ts) from a source run record, and that seed
 * run on both engines directly: which steps are reused and which run, the same events on both.
 */
import { expect } from 'chai';
import { createActor } from 'xstate';
import {
  forEachEngineEvent,
  type EngineEmitted,
  type EngineEvent,
  type EngineInput,
  type EngineOutput,
} from '../../../machines/engine-contract.js';
import type { EngineAdapter } from '../../../src/engine/adapter.js';
import { createGraphAdapter } from '../../../src/engine/adapters/graph.js';
import { nativeAdapter } from '../../../src/engine/adapters/native.js';
import { forkSeed } from '../../../src/engine/rerun.js';
import type { RunRecord, StepRecord } from '../../../src/engine/types.js';
import { compileWorkflow } from '../../../src/workflow/index.js';
import type { CompiledWorkflow } from '../../../src/workflow/types.js';
import { TRUNCATED_FLAG } from '../../../src/workflow/size-bounds.js';
import { TestClock } from '../../fixtures/test-clock.js';
import { CLOCK_START } from '../../conformance/helpers.js';

/** a → b (when a said go) → c → d; a → off (when false); big → after_big; bad alone. */
const WORKFLOW: CompiledWorkflow = compileWorkflow({
  name: 'forked',
  outputs: { last: { from: '${steps.d.outputs}' } },
  steps: [
    { name: 'a', agent: 'tier1_echo', outputs: { go: 'go' } },
    {
      name: 'b',
      agent: 'tier1_echo',
      depends_on: ['a'],
      when: 'steps.a.outputs.go == true',
      inputs: { go: '${context.go}' },
    },
    {
      name: 'c',
      agent: 'tier1_echo',
      depends_on: ['b'],
      inputs: { from: '${steps.b.outputs.go}' },
    },
    { name: 'd', agent: 'tier1_echo', depends_on: ['c'] },
    { name: 'off', agent: 'tier1_echo', depends_on: ['a'], when: 'false' },
    { name: 'big', agent: 'tier1_echo' },
    { name: 'after_big', agent: 'tier1_echo', depends_on: ['big'] },
    { name: 'bad', agent: 'tier1_echo' },
  ],
});

const ISO = new Date(CLOCK_START - 1000).toISOString();

function stepRecord(
  name: string,
  status: StepRecord['status'],
  output: unknown,
  extra: Partial<StepRecord> = {},
): StepRecord {
  const skipped = status === 'skipped';
  return {
    step_name: name,
    status,
    agent: 'tier1_echo',
    tier: '1',
    model_used: skipped ? null : 'fake:small',
    tokens_used: skipped ? null : { input: 2, output: 1, total: 3 },
    duration_ms: 5,
    retry_count: 0,
    input: {},
    output,
    error: status === 'failed' ? 'boom' : null,
    start_time: skipped ? null : ISO,
    end_time: ISO,
    metadata: { attempts: skipped ? 0 : 1, iterations: skipped ? 0 : 1 },
    ...extra,
  };
}

const SOURCE: RunRecord = {
  run_id: 'source-1',
  workflow_name: 'forked',
  adapter: 'native',
  status: 'failed',
  inputs: {},
  steps: [
    stepRecord('a', 'success', { go: true }),
    stepRecord('b', 'success', { go: 'b-old' }),
    stepRecord('c', 'failed', null),
    stepRecord('d', 'skipped', null, { metadata: { skip_reason: 'dependency failed: c' } }),
    stepRecord('off', 'skipped', null, { metadata: { skip_reason: 'condition false' } }),
    stepRecord('big', 'success', { text: { [TRUNCATED_FLAG]: true, bytes: 9_000_000 } }),
    stepRecord('after_big', 'success', { kept: 'from the old big' }),
    stepRecord('bad', 'failed', null),
  ],
  final_output: null,
  success_rate: 50,
  total_duration_ms: 10,
  step_count: 8,
  failed_step_count: 2,
  start_time: ISO,
  end_time: ISO,
  error: null,
  extra: {},
};

async function runEngine(adapter: EngineAdapter, from: string) {
  const clock = new TestClock(CLOCK_START);
  const calls: string[] = [];
  const events: EngineEvent[] = [];
  const input: EngineInput = {
    runId: 'fork-1',
    workflow: WORKFLOW,
    inputs: {},
    maxConcurrency: 4,
    maxAttempts: 1,
    runAttempt: ({ step, input: stepInput }) => {
      calls.push(step.name);
      return Promise.resolve({
        ok: true,
        output: { ...stepInput, by: step.name },
        error: null,
        modelUsed: null,
        tokensUsed: null,
        iterations: 1,
      });
    },
    retryDelayMs: () => 0,
    clock,
    seed: forkSeed(SOURCE, WORKFLOW, from),
  };
  const actor = createActor(adapter.createLogic(WORKFLOW), { input });
  actor.on('*', (emitted: EngineEmitted) => forEachEngineEvent(emitted, (e) => events.push(e)));
  const done = new Promise<EngineOutput>((resolve, reject) =>
    actor.subscribe({
      next: (snapshot: { status: string; output?: unknown }) => {
        if (snapshot.status === 'done') resolve(snapshot.output as EngineOutput);
      },
      error: reject,
    }),
  );
  actor.start();
  const output = await done;
  const trace = events.flatMap((event) => {
    const name = WORKFLOW.steps[event.index]!.name;
    if (event.type === 'step.started') return [`started:${name}`];
    if (event.type === 'step.finished') {
      return [`finished:${name}=${event.outcome.status}${event.seeded ? ' reused' : ''}`];
    }
    return [];
  });
  return { output, calls: calls.sort(), trace };
}

describe('forkSeed', () => {
  it('reuses successes and condition-false skips not downstream of the step; not failures, truncated outputs, their dependents or the downstream', () => {
    const seed = forkSeed(SOURCE, WORKFLOW, 'b');
    expect([...seed.steps.keys()]).to.deep.equal(['a', 'off']);
    const a = seed.steps.get('a')!;
    expect(a).to.deep.include({
      status: 'success',
      output: { go: true },
      tokensUsed: null,
      modelUsed: 'fake:small',
      attempts: 1,
      startTime: CLOCK_START - 1000,
      // The source's file records no cost: unknown.
      reusedFrom: {
        runId: 'source-1',
        tokensUsed: { input: 2, output: 1, total: 3, costUsd: null },
      },
    });
    expect(seed.steps.get('off')).to.deep.include({
      status: 'skipped',
      skipReason: 'condition false',
      reusedFrom: { runId: 'source-1', tokensUsed: null },
    });
    expect([...forkSeed(SOURCE, WORKFLOW, 'd').steps.keys()]).to.deep.equal(['a', 'b', 'off']);
  });

  for (const adapter of [nativeAdapter, createGraphAdapter()]) {
    it(`runs the step, its dependents and the unreusable steps on the ${adapter.name} engine`, async () => {
      const { output, calls, trace } = await runEngine(adapter, 'c');
      expect(calls).to.deep.equal(['after_big', 'bad', 'big', 'c', 'd']);
      expect(trace.slice(0, 3)).to.deep.equal([
        'finished:a=success reused',
        'finished:b=success reused',
        'finished:off=skipped reused',
      ]);
      expect(output.outcomes[2]!.input).to.deep.equal({ from: 'b-old' });
      expect(output.outcomes.map((o) => o.status)).to.deep.equal([
        'success',
        'success',
        'success',
        'success',
        'skipped',
        'success',
        'success',
        'success',
      ]);
    });
  }

  it('gives the same events on both engines', async () => {
    const [native, graph] = await Promise.all(
      [nativeAdapter, createGraphAdapter()].map((adapter) => runEngine(adapter, 'b')),
    );
    expect(graph!.trace).to.deep.equal(native!.trace);
    expect(graph!.output.outcomes).to.deep.equal(native!.output.outcomes);
    expect(native!.calls).to.deep.equal(['after_big', 'b', 'bad', 'big', 'c', 'd']);
  });
});
