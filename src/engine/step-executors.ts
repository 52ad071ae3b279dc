/**
 * One executor per step kind (src/workflow/step-kinds.ts), chosen in one place: the engines call
 * one {@link AttemptRunner}, which hands each attempt to the executor of its step's kind. An
 * executor keeps the runner's contract: it never rejects, and turns every failure (a throw, a
 * timeout, the run's abort) into a failed {@link AttemptResult}.
 */
import type { AttemptRunner } from '../../machines/engine-contract.js';
import type { StepKind } from '../workflow/step-kinds.js';
import { createHumanExecutor, type HumanExecutorOptions } from './kinds/human.js';
import { createAttemptRunner, type AttemptRunnerOptions } from './step-runner.js';
import { createMapExecutor, type MapExecutorOptions } from './kinds/map.js';
import { createWorkflowStepExecutor, type WorkflowStepOptions } from './kinds/workflow-step.js';

/** An executor for every kind. */
export type StepExecutors = { readonly [K in StepKind]: AttemptRunner };

/** What the executors of one run are built from. */
export interface StepExecutorOptions {
  /** The agent executor's options (the agent step: an agent call, see step-runner.ts). */
  agent: AttemptRunnerOptions;
  /**
   * The map executor's options (kinds/map.ts) but its body runner: a map's body runs through
   * this same table, by the body's kind. @default the run's clock, 1 attempt per item, no delay
   */
  map?: Omit<MapExecutorOptions, 'runBody'>;
  /**
   * The sub-workflow executor's options (kinds/workflow-step.ts). @default none: a workflow
   * step's attempt fails (`sub-workflow steps need a runtime`)
   */
  workflow?: WorkflowStepOptions | undefined;
  /** The human executor's options (a question to a person, see kinds/human.ts). */
  human: HumanExecutorOptions;
}

const NO_RUNTIME = Object.freeze({
  ok: false,
  output: null,
  error: 'sub-workflow steps need a runtime',
  modelUsed: null,
  tokensUsed: null,
  iterations: 1,
});

/** The executors of one run. */
export function createStepExecutors(options: StepExecutorOptions): StepExecutors {
  const executors: { -readonly [K in StepKind]: AttemptRunner } = {
    agent: createAttemptRunner(options.agent),
    map: createMapExecutor({
      clock: options.agent.clock,
      maxAttempts: 1,
      retryDelayMs: () => 0,
      ...options.map,
      // A body of any kind: the executor of its kind (a map of maps runs its own body's).
      runBody: (request) => executors[request.step.kind](request),
    }),
    workflow:
      options.workflow === undefined
        ? () => Promise.resolve(NO_RUNTIME)
        : createWorkflowStepExecutor(options.workflow),
    human: createHumanExecutor(options.human),
  };
  return executors;
}

/** The run's attempt runner: each attempt goes to the executor of its step's kind. */
export function dispatchAttempts(executors: StepExecutors): AttemptRunner {
  return (request) => executors[request.step.kind](request);
}
