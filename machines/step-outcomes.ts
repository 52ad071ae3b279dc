/**
 * Building step outcomes (`StepOutcome`, ARCHITECTURE §6) and the attempt result of a runner
 * that threw. Pure functions over plain values; the scheduler passes in what it keeps per step.
 */
import type { AttemptResult, StepOutcome } from '../src/engine/adapter.js';

/** The outcome of a step whose attempt `attempts` succeeded. */
export function successOutcome(
  input: unknown,
  result: AttemptResult,
  attempts: number,
  startTime: number,
  now: number,
): StepOutcome {
  return {
    status: 'success',
    input,
    output: result.output,
    error: null,
    skipReason: null,
    modelUsed: result.modelUsed,
    tokensUsed: result.tokensUsed,
    attempts,
    iterations: result.iterations,
    startTime,
    endTime: now,
  };
}

/**
 * The outcome of a failed step; `attempts` is 0 when it failed before its first attempt (`when:`
 * or `inputs` could not be evaluated), and then it has no start time.
 */
export function failedOutcome(
  input: unknown,
  error: string,
  attempts: number,
  result: AttemptResult | null,
  startTime: number,
  now: number,
): StepOutcome {
  return {
    status: 'failed',
    input: input ?? null,
    output: null,
    error,
    skipReason: null,
    modelUsed: result?.modelUsed ?? null,
    tokensUsed: result?.tokensUsed ?? null,
    attempts,
    iterations: result?.iterations ?? 0,
    startTime: attempts > 0 ? startTime : null,
    endTime: now,
  };
}

/** The outcome of a skipped step. */
export function skippedOutcome(reason: string, now: number): StepOutcome {
  return {
    status: 'skipped',
    input: null,
    output: null,
    error: null,
    skipReason: reason,
    modelUsed: null,
    tokensUsed: null,
    attempts: 0,
    iterations: 0,
    startTime: null,
    endTime: now,
  };
}

/** The result of an attempt whose runner threw or rejected (runners should not, but may). */
export function thrownResult(error: unknown): AttemptResult {
  return {
    ok: false,
    output: null,
    error: messageOf(error),
    modelUsed: null,
    tokensUsed: null,
    iterations: 0,
  };
}

/** The text of a thrown value, as an outcome's or a result's `error`. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : 'unknown error';
}
