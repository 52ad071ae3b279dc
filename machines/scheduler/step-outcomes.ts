/**
 * Building step outcomes (`StepOutcome`, ARCHITECTURE §6) and the attempt result of a runner
 * that threw. Pure functions over plain values; the scheduler passes in what it keeps per step.
 */
import type { AttemptResult, StepOutcome } from '../engine-contract.js';

/**
 * A step outcome. A class rather than object literals: V8 tracks object literals by allocation
 * site and, seeing outcomes live until their run ends, starts allocating them in the old
 * generation ("pretenuring"); the old outcomes then keep young objects alive through scavenges
 * and the heap grows between full GCs. Instances made by `new` are not pretenured.
 */
class Outcome implements StepOutcome {
  constructor(
    readonly status: StepOutcome['status'],
    readonly input: unknown,
    readonly output: Record<string, unknown> | null,
    readonly error: string | null,
    readonly skipReason: string | null,
    readonly modelUsed: string | null,
    readonly tokensUsed: StepOutcome['tokensUsed'],
    readonly attempts: number,
    readonly iterations: number,
    readonly startTime: number | null,
    readonly endTime: number,
    readonly verification: StepOutcome['verification'] = undefined,
    readonly messages: StepOutcome['messages'] = undefined,
    readonly items: StepOutcome['items'] = undefined,
  ) {}
}

/** The outcome of a step whose attempt `attempts` succeeded. */
export function successOutcome(
  input: unknown,
  result: AttemptResult,
  attempts: number,
  startTime: number,
  now: number,
): StepOutcome {
  return new Outcome(
    'success',
    input,
    result.output,
    null,
    null,
    result.modelUsed,
    result.tokensUsed,
    attempts,
    result.iterations,
    startTime,
    now,
    result.verification,
    result.messages,
    result.items,
  );
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
  return new Outcome(
    'failed',
    input ?? null,
    null,
    error,
    null,
    result?.modelUsed ?? null,
    result?.tokensUsed ?? null,
    attempts,
    result?.iterations ?? 0,
    attempts > 0 ? startTime : null,
    now,
    result?.verification,
    result?.messages,
    result?.items,
  );
}

/** The outcome of a skipped step. */
export function skippedOutcome(reason: string, now: number): StepOutcome {
  return new Outcome('skipped', null, null, null, reason, null, null, 0, 0, null, now);
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
