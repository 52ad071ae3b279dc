/**
 * The item counts of a run's running map steps as an api instance sees them (the run executes on
 * a worker): the latest item frame (`step_complete` with `items`) of each map step in the run's
 * recent events, for the steps whose `step_end` has not come since. Pure.
 */
import type { WorkflowEvent } from '../generated/events.js';
import type { MapProgress } from '../engine/kinds/map.js';

/** `events` newest first (an `XREVRANGE` of the run's stream); an empty map when none runs. */
export function runningMapItems(
  events: readonly WorkflowEvent[],
): Map<string, Readonly<MapProgress>> {
  const items = new Map<string, Readonly<MapProgress>>();
  const seen = new Set<string>();
  for (const event of events) {
    if (event.type === 'workflow_end') break;
    if (event.type !== 'step_end' && event.type !== 'step_complete') continue;
    if (seen.has(event.step)) continue;
    if (event.type === 'step_complete' && event.items === undefined) continue;
    seen.add(event.step);
    if (event.type === 'step_complete' && event.items !== undefined) {
      const { total, done, failed, running } = event.items;
      items.set(event.step, { total, done, failed, running });
    }
  }
  return items;
}
