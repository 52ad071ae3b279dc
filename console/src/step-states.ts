/**
 * What a step shows in the console: the wire statuses (schemas/events.schema.json, StepStatus)
 * plus the waits the events announce (approval_required: a tool approval, or `kind: "input"`, a
 * human step's question).
 */
export const STEP_STATE = {
  pending: 'pending',
  running: 'running',
  retrying: 'retrying',
  awaitingApproval: 'awaiting approval',
  awaitingInput: 'awaiting input',
  success: 'success',
  failed: 'failed',
  skipped: 'skipped',
} as const;

export type StepState = (typeof STEP_STATE)[keyof typeof STEP_STATE];

/** The CSS class of a state (`state-awaiting-input`). */
export function stateClass(state: StepState): string {
  return `state-${state.replace(/ /g, '-')}`;
}
