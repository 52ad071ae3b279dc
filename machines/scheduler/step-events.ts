/**
 * The internal event vocabulary of both engines: what comes back to an engine actor from the work
 * its scheduler core started. The native scheduler (`native-scheduler.logic.ts`) and the graph
 * machine (`graph.machine.ts`, run by `graph.logic.ts`) receive the same four event types with
 * the same fields, and hand them to the same {@link SchedulerCore.receive}:
 *
 * | type             | fields                                 | sent when                                      |
 * | ---------------- | -------------------------------------- | ---------------------------------------------- |
 * | `step.settled`   | `index`, `attempt`, `result`           | an attempt's runner settled (ok or failed)     |
 * | `step.retry`     | `index`                                | a retry delay elapsed (the injected clock)     |
 * | `step.iteration` | `index`, `attempt`, `iteration`, `output` | a loop iteration of the attempt finished    |
 * | `step.approval`  | `index`, `attempt`, `waiting`          | a tool call started / stopped waiting for the approval gate |
 *
 * Few event types, the same for every workflow, addressed to a step by `index` (its YAML
 * position): nothing XState keeps per (state node, event type) grows with the workflow. These are
 * internal: the run's observers see engine events (`engine-contract.ts`), never these.
 *
 * Pure: types and constants only.
 */
import type { AttemptResult } from '../engine-contract.js';

export const STEP_SETTLED = 'step.settled';
export const STEP_RETRY = 'step.retry';
export const STEP_ITERATION = 'step.iteration';
export const STEP_APPROVAL = 'step.approval';

/** Attempt `attempt` of step `index` settled with `result`. */
export interface StepSettledEvent {
  type: typeof STEP_SETTLED;
  index: number;
  attempt: number;
  result: AttemptResult;
}

/** The retry delay of step `index` elapsed: its next attempt may start. */
export interface StepRetryEvent {
  type: typeof STEP_RETRY;
  index: number;
}

/** Loop iteration `iteration` of attempt `attempt` of step `index` finished with `output`. */
export interface StepIterationEvent {
  type: typeof STEP_ITERATION;
  index: number;
  attempt: number;
  iteration: number;
  output: Record<string, unknown> | null;
}

/** A tool call of attempt `attempt` of step `index` started (`waiting`) or stopped waiting. */
export interface StepApprovalEvent {
  type: typeof STEP_APPROVAL;
  index: number;
  attempt: number;
  waiting: boolean;
}

/** An event the work of a step sends back to its engine actor. */
export type StepEvent = StepSettledEvent | StepRetryEvent | StepIterationEvent | StepApprovalEvent;

/** The four step event types. */
export const STEP_EVENT_TYPES: readonly StepEvent['type'][] = [
  STEP_SETTLED,
  STEP_RETRY,
  STEP_ITERATION,
  STEP_APPROVAL,
];

/** Whether `event` is one of the {@link StepEvent}s (by its type). */
export function isStepEvent(event: { type: string }): event is StepEvent {
  const type = event.type;
  return (
    type === STEP_SETTLED ||
    type === STEP_RETRY ||
    type === STEP_ITERATION ||
    type === STEP_APPROVAL
  );
}
