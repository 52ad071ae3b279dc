/**
 * The runtime's side of XState inspection: what `createRuntime({ inspect })` hands to the actor
 * system. The graph engine updates its snapshot's step regions in place (O(1) per step event,
 * `machines/graph.logic.ts`), so a snapshot read later shows the run's latest state. Inspectors
 * read later: `@statelyai/inspect` serialises on an idle callback. Each snapshot event therefore
 * reaches the inspector with its state value copied as it was at that transition (a few short
 * strings per step; paid only while an inspector is attached).
 */
import type { InspectionEvent, Observer } from 'xstate';

/** An XState inspector: a callback, or an observer such as `createWebSocketInspector().inspect`. */
export type Inspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** `inspector` as a callback that receives snapshot events with their state value fixed. */
export function stableInspection(inspector: Inspector): (event: InspectionEvent) => void {
  const deliver =
    typeof inspector === 'function'
      ? inspector
      : (event: InspectionEvent) => inspector.next?.(event);
  return (event) => {
    if (event.type !== '@xstate.snapshot') {
      deliver(event);
      return;
    }
    const snapshot = event.snapshot;
    const value = (snapshot as { value?: unknown }).value;
    if (typeof value !== 'object' || value === null) {
      deliver(event);
      return;
    }
    // The spread keeps the snapshot's own members (a machine snapshot's `toJSON`, `matches`).
    const fixed: typeof snapshot = { ...snapshot };
    (fixed as { value?: unknown }).value = copyValue(value);
    deliver({ ...event, snapshot: fixed });
  };
}

/** A copy of a state value: nested objects of state names. */
function copyValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) copy[key] = copyValue(child);
  return copy;
}
