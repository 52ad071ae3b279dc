/**
 * The layout of a scheduler's per-step numbers: one plain number array holds {@link FIELDS}
 * numbers per step (`slots[i * FIELDS + F_STATE]` …), followed by the ready heap's region (see
 * `ready-heap.ts`). One array instead of six saves about 0.25 KB per run of a small workflow,
 * which would otherwise pay an array header and backing store for each.
 */
import type { StepOutcome } from '../engine-contract.js';
import type { CompiledStep } from '../../src/workflow/types.js';

/** Step states (`slots[i * FIELDS + F_STATE]`). */
export const PENDING = 0;
export const RUNNING = 1;
export const RETRY_WAIT = 2;
export const FINISHED = 3;
/** Names of the step states, by state number, as an inspector shows them. */
const STATE_NAMES = ['pending', 'running', 'retrying', 'finished'] as const;

/** Offsets of a step's numbers, and how many there are per step. */
export const F_REMAINING = 0; // unfinished dependencies
export const F_STATE = 1; // PENDING … FINISHED
export const F_ATTEMPT = 2; // the current attempt (1-based)
export const F_START = 3; // start time of the first attempt
export const F_ATTEMPT_START = 4; // start time of the current attempt
export const FIELDS = 5;

/**
 * An array of `n` zeros, allocated at its exact length. Plain arrays rather than typed arrays: a
 * run of a small workflow would otherwise pay for several ArrayBuffers (about 180 bytes each
 * before any data); `push` would over-allocate (capacity 17 for 5 steps).
 */
export function zeros(n: number): number[] {
  return new Array<number>(n).fill(0);
}

/** Each step's status by name: its outcome's status once finished, else its state's name. */
export function stepStatuses(
  steps: readonly CompiledStep[],
  outcomes: readonly (StepOutcome | undefined)[],
  slots: readonly number[],
): Record<string, string> {
  const states: Record<string, string> = {};
  for (let i = 0; i < steps.length; i++) {
    states[steps[i]!.name] = outcomes[i]?.status ?? STATE_NAMES[slots[i * FIELDS + F_STATE]!]!;
  }
  return states;
}
