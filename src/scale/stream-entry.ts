/**
 * One entry of a run's Redis event stream: field `e` holds the wire event as JSON, field `l` is
 * `1` on the event that ends the run's stream (the publisher knows whether evaluation follows
 * `workflow_end`; readers elsewhere do not). Readers never infer the end themselves.
 */
import type { WorkflowEvent } from '../generated/events.js';

export const EVENT_FIELD = 'e';
export const LAST_FIELD = 'l';

/** Flat field list for XADD. */
export function encodeStreamEntry(event: WorkflowEvent, last: boolean): string[] {
  const fields = [EVENT_FIELD, JSON.stringify(event)];
  if (last) fields.push(LAST_FIELD, '1');
  return fields;
}

export interface StreamEntry {
  id: string;
  event: WorkflowEvent;
  last: boolean;
}

/** An entry as XRANGE/XREAD return it, or undefined when it is not one of ours. */
export function decodeStreamEntry(id: string, fields: readonly string[]): StreamEntry | undefined {
  let json: string | undefined;
  let last = false;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === EVENT_FIELD) json = fields[i + 1];
    else if (fields[i] === LAST_FIELD) last = fields[i + 1] === '1';
  }
  if (json === undefined) return undefined;
  try {
    const event = JSON.parse(json) as WorkflowEvent;
    if (typeof event !== 'object' || event === null || typeof event.seq !== 'number')
      return undefined;
    return { id, event, last };
  } catch {
    return undefined;
  }
}
