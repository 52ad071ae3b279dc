import type { AttemptResult, EngineInput } from '../../machines/engine-contract.js';
import { TestClock } from '../fixtures/test-clock.js';
import type { CompiledStep, CompiledWorkflow, EvalScope } from '../../src/workflow/types.js';

/** A compiled workflow built by hand: `deps[i]` lists the indexes step i depends on. */
export function workflowOf(
  deps: number[][],
  extra: (index: number) => Partial<CompiledStep> = () => ({}),
): CompiledWorkflow {
  const dependents: number[][] = deps.map(() => []);
  deps.forEach((list, i) => list.forEach((d) => dependents[d]!.push(i)));
  const steps: CompiledStep[] = deps.map((list, i) => ({
    name: `s${i}`,
    index: i,
    kind: 'agent',
    agent: 'tier0_echo',
    tier: 0,
    description: '',
    dependsOn: list.map((d) => `s${d}`),
    dependsOnIndex: list,
    dependentsIndex: dependents[i]!,
    when: undefined,
    inputs: () => ({ i }),
    outputs: {},
    tools: [],
    model: undefined,
    maxAttempts: undefined,
    resume: 'retry',
    timeoutSeconds: undefined,
    loopUntil: undefined,
    loopMax: undefined,
    verify: undefined,
    ...extra(i),
  }));
  return {
    name: 'fixture',
    description: '',
    version: undefined,
    document: { name: 'fixture', steps: [] },
    inputs: {},
    outputNames: ['last'],
    optionalOutputs: [],
    outputs: (scope: EvalScope) => ({ last: scope.steps[`s${deps.length - 1}`]?.outputs ?? null }),
    steps,
    stepIndex: new Map(steps.map((s) => [s.name, s.index])),
  };
}

export function ok(output: Record<string, unknown> = {}): AttemptResult {
  return { ok: true, output, error: null, modelUsed: null, tokensUsed: null, iterations: 1 };
}

export function failed(error: string): AttemptResult {
  return { ok: false, output: null, error, modelUsed: null, tokensUsed: null, iterations: 1 };
}

export function engineInput(
  workflow: CompiledWorkflow,
  overrides: Partial<EngineInput> = {},
): EngineInput {
  return {
    runId: 'r1',
    workflow,
    inputs: {},
    maxConcurrency: 10,
    maxAttempts: 1,
    runAttempt: ({ input }) => Promise.resolve(ok(input)),
    retryDelayMs: () => 10,
    clock: new TestClock(),
    ...overrides,
  };
}
