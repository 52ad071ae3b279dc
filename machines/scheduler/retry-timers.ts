/**
 * Retry timers of a run, by step index, in an array made when the first retry is scheduled (most
 * runs never retry). The timers come from the run's injected clock.
 */
import type { EngineInput } from '../engine-contract.js';

/** Cancels the retry timer of step `index`, if it has one. */
export function clearRetryTimer(
  clock: EngineInput['clock'],
  timers: unknown[] | undefined,
  index: number,
): void {
  const timer = timers?.[index];
  if (timers === undefined || timer === undefined) return;
  clock.clearTimeout(timer);
  timers[index] = undefined;
}
