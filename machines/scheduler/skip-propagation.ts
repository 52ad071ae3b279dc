/**
 * Skip reasons and skip propagation (ARCHITECTURE §6): a failed step's unfinished transitive
 * dependents are skipped with `dependency failed: <step>` (O(dependents)), and an abort skips
 * every pending step.
 */
import type { CompiledStep } from '../../src/workflow/types.js';
import { F_STATE, FIELDS, FINISHED, PENDING } from './step-slots.js';

/** Reason of a step skipped because its `when:` was false. */
export const SKIP_CONDITION_FALSE = 'condition false';
/** Reason of steps left when nothing runs and nothing can start. */
export const SKIP_UNMET_DEPENDENCIES = 'unmet dependencies';

/**
 * Marks every pending transitive dependent of `root` finished in `slots` (the caller then emits
 * the skips), appending its index to `out` and its reason to `reasons`.
 */
export function collectDependents(
  steps: readonly CompiledStep[],
  slots: number[],
  root: number,
  out: number[],
  reasons: Map<number, string>,
): void {
  const reason = `dependency failed: ${steps[root]!.name}`;
  const stack = [root];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const d of steps[current]!.dependentsIndex) {
      if (slots[d * FIELDS + F_STATE] !== PENDING) continue;
      slots[d * FIELDS + F_STATE] = FINISHED;
      out.push(d);
      reasons.set(d, reason);
      stack.push(d);
    }
  }
}

/**
 * Marks every pending step finished in `slots` (an abort skips them all with its `reason`),
 * appending its index to `out` and the reason to `reasons`; one scan, as abort is rare.
 */
export function collectPending(
  n: number,
  slots: number[],
  reason: string,
  out: number[],
  reasons: Map<number, string>,
): void {
  for (let i = 0; i < n; i++) {
    if (slots[i * FIELDS + F_STATE] === PENDING) {
      slots[i * FIELDS + F_STATE] = FINISHED;
      out.push(i);
      reasons.set(i, reason);
    }
  }
}
