/**
 * Verification with corrections (issue 13 point 5): after a successful attempt of a step with
 * `verify:`, its criteria are checked against the output; failures re-run the step (up to
 * `max_correction_attempts`) with `inputs._verification_feedback` telling the agent what failed.
 * The VerificationResult, with each CorrectionAttempt, goes into the step record.
 */
import type { CorrectionAttempt, VerificationResult } from '../generated/run-record.js';
import { addUsage } from '../llm/types.js';
import type { EvalScope, StepView } from '../workflow/types.js';
import type { CompiledVerify } from '../workflow/verify.js';
import type { AttemptResult, AttemptRunner, EngineClock } from '../../machines/engine-contract.js';

/** The input key a correction's feedback is passed under (docs/workflow-format.md, "Verification"). */
export const FEEDBACK_INPUT = '_verification_feedback';

type AttemptRequest = Parameters<AttemptRunner>[0];

/** Failed criteria of one output: name → why. */
function check(
  policy: CompiledVerify,
  request: AttemptRequest,
  output: Record<string, unknown> | null,
): Map<string, string> {
  const own = output ?? {};
  const steps: Record<string, StepView> = {
    ...request.scope.steps,
    [request.step.name]: { status: 'success', outputs: own },
  };
  const scope: EvalScope = { inputs: request.scope.inputs, context: request.scope.context, steps };
  const failed = new Map<string, string>();
  for (const criterion of policy.criteria) {
    const problem = criterion.check(scope, own);
    if (problem !== undefined) failed.set(criterion.name, problem);
  }
  return failed;
}

function passes(policy: CompiledVerify, failed: Map<string, string>): boolean {
  if (failed.size === 0) return true;
  if (policy.requireAll) return false;
  return policy.criteria.length - failed.size > policy.criteria.length / 2;
}

function results(policy: CompiledVerify, failed: Map<string, string>): Record<string, boolean> {
  return Object.fromEntries(policy.criteria.map((c) => [c.name, !failed.has(c.name)]));
}

/**
 * Checks `first` (a successful attempt) and corrects it. `rerun` runs the step again with the
 * given input and signal. Resolves with the attempt's result: ok with the passing output, or
 * failed with the last problems; `verification` set either way.
 */
export async function verifyAttempt(
  policy: CompiledVerify,
  request: AttemptRequest,
  first: AttemptResult,
  clock: EngineClock,
  rerun: (input: Record<string, unknown>, signal: AbortSignal) => Promise<AttemptResult>,
): Promise<AttemptResult> {
  const start = clock.now();
  let current = first;
  let failed = check(policy, request, first.output);
  let tokens = first.tokensUsed;
  let iterations = first.iterations;
  const corrections: CorrectionAttempt[] = [];
  let status: VerificationResult['status'] | undefined = passes(policy, failed)
    ? 'passed'
    : undefined;
  let error: string | null = null;
  const critical = policy.criteria.filter((c) => c.critical && failed.has(c.name));
  if (status === undefined && policy.haltOnCritical && critical.length > 0) {
    status = 'uncorrectable';
    error = `critical criteria failed: ${critical.map((c) => failed.get(c.name)).join('; ')}`;
  }
  const deadline =
    policy.timeoutSeconds === undefined ? Infinity : start + policy.timeoutSeconds * 1000;
  for (let n = 1; status === undefined && n <= policy.maxCorrections; n++) {
    if (clock.now() >= deadline) {
      status = 'failed';
      error = `verification timed out after ${policy.timeoutSeconds}s`;
      break;
    }
    const attemptStart = clock.now();
    const feedback = {
      attempt: n,
      max_attempts: policy.maxCorrections,
      failed_criteria: [...failed.keys()],
      issues: [...failed.values()],
      previous_output: current.output,
    };
    const bounded = boundedSignal(request.signal, deadline - attemptStart, clock);
    let next: AttemptResult;
    try {
      next = await rerun({ ...request.input, [FEEDBACK_INPUT]: feedback }, bounded.signal);
    } finally {
      bounded.dispose();
    }
    tokens = addUsage(tokens, next.tokensUsed);
    iterations += next.iterations;
    const duration = Math.max(0, Math.round(clock.now() - attemptStart));
    if (!next.ok) {
      corrections.push({
        attempt_number: n,
        outcome: 'failed',
        issues_resolved: [],
        issues_remaining: [...failed.keys()],
        corrected_output: null,
        duration_ms: duration,
      });
      if (bounded.timedOut) {
        status = 'failed';
        error = `verification timed out after ${policy.timeoutSeconds}s`;
      } else if (request.signal.aborted) {
        status = 'failed';
        error = next.error;
      }
      continue;
    }
    const after = check(policy, request, next.output);
    const resolved = [...failed.keys()].filter((name) => !after.has(name));
    corrections.push({
      attempt_number: n,
      outcome: after.size === 0 ? 'success' : resolved.length > 0 ? 'partial' : 'failed',
      issues_resolved: resolved,
      issues_remaining: [...after.keys()],
      corrected_output: next.output,
      duration_ms: duration,
    });
    current = next;
    failed = after;
    if (passes(policy, failed)) status = 'corrected';
  }
  if (status === undefined) {
    status = policy.maxCorrections === 0 ? 'failed' : 'uncorrectable';
    error = `verification failed: ${[...failed.values()].join('; ')}`;
  }
  const ok = status === 'passed' || status === 'corrected';
  const verification: VerificationResult = {
    status,
    criteria_results: results(policy, failed),
    corrections,
    final_output: current.output,
    total_duration_ms: Math.max(0, Math.round(clock.now() - start)),
    error,
  };
  return {
    ok,
    output: ok ? current.output : null,
    error: ok ? null : error,
    modelUsed: current.modelUsed,
    tokensUsed: tokens,
    iterations,
    verification,
  };
}

/** The run's signal, also aborted after `ms` (the verification's time bound). */
function boundedSignal(
  runSignal: AbortSignal,
  ms: number,
  clock: EngineClock,
): { signal: AbortSignal; timedOut: boolean; dispose(): void } {
  if (ms === Infinity) return { signal: runSignal, timedOut: false, dispose: () => undefined };
  const controller = new AbortController();
  const state = {
    signal: AbortSignal.any([runSignal, controller.signal]),
    timedOut: false,
    dispose: () => clock.clearTimeout(timer),
  };
  const timer = clock.setTimeout(
    () => {
      state.timedOut = true;
      controller.abort(new Error('verification timed out'));
    },
    Math.max(0, ms),
  );
  return state;
}
