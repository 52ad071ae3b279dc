/**
 * Progress of `agentic run` for a person: one line per step start and end (with its duration),
 * retries and the run's end, written as events arrive. Pure formatting: the caller writes.
 */
import type { WorkflowEvent } from '../engine/types.js';
import { STEP_STATUS } from '../workflow/types.js';

function seconds(ms: number | undefined): string {
  if (ms === undefined) return '';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A step's name; a child run's step (a sub-workflow step's) as `<parent step>/<step>`. */
function stepOf(event: { step: string; parent_step?: string | undefined }): string {
  return event.parent_step === undefined ? event.step : `${event.parent_step}/${event.step}`;
}

/** The line for an event, or undefined for events a person does not need to see. */
export function progressLine(event: WorkflowEvent): string | undefined {
  switch (event.type) {
    case 'workflow_start':
      return `run ${event.run_id}: ${event.workflow_name}${event.step_count === undefined ? '' : ` (${event.step_count} steps)`}`;
    case 'step_start':
      return `  > ${stepOf(event)}${event.agent === undefined ? '' : ` [${event.agent}]`}${(event.attempt ?? 1) > 1 ? ` attempt ${event.attempt}` : ''}`;
    case 'step_end':
      if (event.status === STEP_STATUS.SKIPPED) {
        return `  - ${stepOf(event)} skipped${event.skip_reason ? `: ${event.skip_reason}` : ''}`;
      }
      if (event.status === STEP_STATUS.SUCCESS)
        return `  ok ${stepOf(event)} ${seconds(event.duration_ms)}`;
      return `  FAILED ${stepOf(event)} ${seconds(event.duration_ms)}${event.error ? `: ${event.error}` : ''}`;
    case 'step_error':
      return `  ! ${stepOf(event)} attempt ${event.attempt ?? 1} failed${event.error ? `: ${event.error}` : ''}${event.retry_in_ms === undefined ? '' : `; retrying in ${seconds(event.retry_in_ms)}`}`;
    case 'workflow_end':
      return `${event.status} in ${seconds(event.duration_ms)}${event.error ? `: ${event.error}` : ''}${event.filename ? ` (run file ${event.filename})` : ''}`;
    case 'token_delta':
    case 'step_complete':
    case 'error':
    case 'evaluation_start':
    case 'evaluation_complete':
    case 'approval_required':
    case 'approval_decision':
      return undefined;
    default: {
      const never: never = event;
      return never;
    }
  }
}
