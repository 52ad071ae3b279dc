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

/** An executor for every kind. */
export type StepExecutors = { readonly [K in StepKind]: AttemptRunner };

/** What the executors of one run are built from. */
export interface StepExecutorOptions {
  /** The agent executor's options (the agent step: an agent call, see step-runner.ts). */
  agent: AttemptRunnerOptions;
  /** The human executor's options (a question to a person, see kinds/human.ts). */
  human: HumanExecutorOptions;
}

/** The executors of one run. */
export function createStepExecutors(options: StepExecutorOptions): StepExecutors {
  return {
    agent: createAttemptRunner(options.agent),
    human: createHumanExecutor(options.human),
  };
}

/** The run's attempt runner: each attempt goes to the executor of its step's kind. */
export function dispatchAttempts(executors: StepExecutors): AttemptRunner {
  return (request) => executors[request.step.kind](request);
}
