import type { AttemptResult, EngineClock, EngineInput } from '../../machines/engine-contract.js';
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

/** A clock whose timers fire only when the test advances it. */
export function manualClock(): EngineClock & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let id = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout: (fn, ms) => {
      timers.set(++id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
    advance(ms) {
      now += ms;
      for (const [key, timer] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > now || !timers.has(key)) continue;
        timers.delete(key);
        timer.fn();
      }
    },
    pending: () => timers.size,
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
    clock: manualClock(),
    ...overrides,
  };
}
