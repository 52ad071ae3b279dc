/**
 * What a scheduler knows of the steps that have not succeeded, for "why isn't my run moving"
 * (`GET /api/runs/{run_id}/explain`): each step's state, the dependencies it waits for, whether
 * it is ready but held by `maxConcurrency`, when its retry starts, and the values a false `when:`
 * saw. Both engines run the same {@link SchedulerCore}, so both give the same facts; the engine
 * actor's snapshot holds the core (`engineSchedulerOf`). Nothing here is kept per event: the
 * facts are read from the core when asked.
 *
 * Pure: imports types only.
 */
import type { EvalScope, WhenReferences } from '../../src/workflow/types.js';
import type { StepRegionState } from './scheduler-core.js';

/** A dependency a pending step still waits for, and its state. */
export interface DependencyFact {
  step: string;
  status: StepRegionState;
}

/** What the scheduler knows of one step that has not succeeded. */
export interface StepFacts {
  index: number;
  name: string;
  status: StepRegionState;
  /** The current (or last) attempt, 1-based; 0 before the first. */
  attempt: number;
  /** Attempts the step may make. */
  maxAttempts: number;
  /** Epoch ms the current attempt started (running steps); else null. */
  attemptStartedAt: number | null;
  /** Unfinished dependencies of a pending step (empty otherwise). */
  waitingFor: DependencyFact[];
  /** Pending with every dependency finished: waiting for a free slot (`maxConcurrency`). */
  ready: boolean;
  /** Epoch ms the next attempt of a retrying step starts; else null. */
  retryAt: number | null;
  /** The values a false `when:` read (`inputs.x`, `steps.a.status` …); else null. */
  conditionValues: Record<string, unknown> | null;
  skipReason: string | null;
  error: string | null;
}

/** What a scheduler knows of its run, read when asked. */
export interface EngineFacts {
  runId: string;
  workflow: string;
  /** Epoch ms by the run's clock when the facts were read (the times above are by it too). */
  now: number;
  /** Steps started and not finished (attempts in flight and retry waits). */
  running: number;
  maxConcurrency: number;
  finished: number;
  total: number;
  /** Every step that has not succeeded, in YAML order. */
  steps: StepFacts[];
}

/** What a scheduler core answers (both engines' cores are one). */
export interface FactSource {
  facts(): EngineFacts;
}

/**
 * The values of the names a condition reads, as it saw them: `inputs.<name>`,
 * `steps.<name>.status` and `steps.<name>.outputs` (null for a step not finished then),
 * `context.<name>`. The values are the run's own (not copied).
 */
export function conditionValues(refs: WhenReferences, scope: EvalScope): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of refs.inputs) values[`inputs.${name}`] = scope.inputs[name] ?? null;
  for (const name of refs.steps) {
    const view = scope.steps[name];
    values[`steps.${name}.status`] = view?.status ?? null;
    values[`steps.${name}.outputs`] = view?.outputs ?? null;
  }
  for (const name of refs.context) values[`context.${name}`] = scope.context[name] ?? null;
  return values;
}

/**
 * The scheduler core inside an engine actor's snapshot: the native scheduler's `core`, or the
 * graph machine's `context.run` (both a {@link FactSource}); undefined for anything else.
 */
export function engineFactSource(snapshot: unknown): FactSource | undefined {
  if (typeof snapshot !== 'object' || snapshot === null) return undefined;
  const holder = snapshot as { core?: unknown; context?: { run?: unknown } };
  const core = holder.core ?? holder.context?.run;
  return typeof (core as Partial<FactSource> | undefined)?.facts === 'function'
    ? (core as FactSource)
    : undefined;
}
