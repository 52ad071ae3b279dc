/**
 * Events that change what an engine actor shows, not what its scheduler core decides: the work
 * of a step kind that lives in its executor (`src/engine/step-executors.ts`) reports them to the
 * engine actor, and the graph machine draws them (docs/engine.md, "Kinds in the machine"):
 *
 * | type         | fields                   | sent when                                                      |
 * | ------------ | ------------------------ | -------------------------------------------------------------- |
 * | `step.child` | `index`, `child`         | a sub-workflow step's child run actor was made (the engine's child) |
 * | `step.items` | `index`, `items`         | a map step began, or a bounded share of its items settled      |
 *
 * The graph machine lists a `step.child` child in its snapshot's `children` under the id of the
 * step's `invoke` ({@link childActorId}) while the step runs; XState's own
 * `xstate.done.actor.<id>` / `xstate.error.actor.<id>` (sent by the child to its parent when it
 * ends) take it off. `step.items` sets `context.items.<step>` (the machine's `countItems`). The
 * native scheduler, which has no states to draw, ignores both. They never reach the core: a run
 * decides the same with or without them.
 *
 * Pure: types and constants only.
 */
import type { AnyActorRef } from 'xstate';

export const STEP_CHILD = 'step.child';
export const STEP_ITEMS = 'step.items';

/** A map step's item counts (what `GET /api/runs/{id}/explain` counts too). */
export interface ItemCounter {
  total: number;
  /** Items that succeeded. */
  done: number;
  failed: number;
  running: number;
}

/** Step `index`'s child run actor was made, as the engine actor's child with its invoke's id. */
export interface StepChildEvent {
  type: typeof STEP_CHILD;
  index: number;
  child: AnyActorRef;
}

/** Map step `index`'s item counts now. */
export interface StepItemsEvent {
  type: typeof STEP_ITEMS;
  index: number;
  items: ItemCounter;
}

/** The id of the invoke of a sub-workflow step `step`: its child run actor's id. */
export function childActorId(step: string): string {
  return `child:${step}`;
}
