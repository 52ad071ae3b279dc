import type { AgentLookup } from '../agents/agent-set.js';
import { setMaxListeners } from 'node:events';
import { SYNCHRONOUS_TIER0_AGENTS } from '../agents/tier0/index.js';
import { AgentFailure, type Agent, type AgentRequest, type AgentResult } from '../agents/types.js';
import { errorMessage } from '../errors.js';
import { addUsage, type TokenUsage } from '../llm/types.js';
import { DEFAULT_CONTENT_LIMITS } from '../workflow/limits.js';
import { boundRecord } from '../workflow/size-bounds.js';
import { isPlainObject, isTruthy } from '../workflow/values.js';
import type { CompiledStep, EvalScope, StepView } from '../workflow/types.js';
import type { AttemptResult, AttemptRunner, EngineClock } from '../../machines/engine-contract.js';
import { verifyAttempt } from './verification.js';

/** Iterations of a `loop_until` step when it sets no `loop_max`. */
export const DEFAULT_LOOP_MAX = 10;

export interface AttemptRunnerOptions {
  runId: string;
  agents: AgentLookup;
  clock: EngineClock;
  /**
   * Largest step output: entries over it are replaced by truncation markers (docs/limits.md).
   * @default 1048576
   */
  maxOutputBytes?: number;
  /** Receives chunks of a step's streamed model output (`token_delta`). */
  onDelta?: (step: string, text: string) => void;
  /**
   * What the run keeps of a successful attempt's output, once within `maxOutputBytes` (the run's
   * byte budget, see held-bytes.ts). A throw fails the attempt with its message.
   * @default keeps every output
   */
  holdOutput?: (output: Record<string, unknown>) => Record<string, unknown>;
  /**
   * Timeout of a step that sets no `timeout_seconds`, in ms (docs/limits.md,
   * `AGENTIC_STEP_TIMEOUT_SECONDS`). @default none
   */
  defaultStepTimeoutMs?: number;
}

/** Made only when a step times out: an Error captures a stack, too dear for every step. */
class StepTimeoutError extends Error {
  constructor(seconds: number) {
    super(stepTimeoutMessage(seconds));
    this.name = 'StepTimeoutError';
  }
}

function stepTimeoutMessage(seconds: number): string {
  return `step timed out after ${seconds}s`;
}

/**
 * The {@link AttemptRunner} of a run: resolves the step's agent, calls it with an AbortSignal
 * that combines the run's signal and the per-step timeout, runs `loop_until` iterations (up to
 * `loop_max`, default 10; each iteration's scope sees the previous output as
 * `steps.<self>.outputs`), and turns every failure (a throw, a rejection, a timeout, an abort)
 * into a failed {@link AttemptResult}. It never rejects. Outputs over `maxOutputBytes` have their
 * biggest entries replaced by truncation markers.
 */
export function createAttemptRunner(options: AttemptRunnerOptions): AttemptRunner {
  const { agents, clock, runId, onDelta, holdOutput } = options;
  const defaultSeconds =
    options.defaultStepTimeoutMs === undefined ? undefined : options.defaultStepTimeoutMs / 1000;
  const maxOutput = options.maxOutputBytes ?? DEFAULT_CONTENT_LIMITS.maxStepIoBytes;
  const held = (result: AttemptResult): AttemptResult =>
    holdOutput === undefined ? result : heldResult(result, holdOutput);
  const succeeded = (result: AgentResult): AttemptResult => held(singleSuccess(result, maxOutput));
  return (request) => {
    const step = request.step;
    const agent = agents(step.agent);
    if (agent === undefined) return Promise.resolve(failure(`unknown agent '${step.agent}'`, 0));
    // `aborted` (when the engine gives it) answers without making the run's signal.
    if (request.aborted ?? request.signal.aborted) {
      return Promise.resolve(failure(abortMessage(request.signal), 0));
    }
    // The step's own timeout, else the runtime's default one (not for agents it cannot interrupt).
    const timeout =
      step.timeoutSeconds ?? (SYNCHRONOUS_TIER0_AGENTS.has(agent) ? undefined : defaultSeconds);
    if (step.verify !== undefined) {
      const policy = step.verify;
      const run = (input: Record<string, unknown>, signal: AbortSignal): Promise<AttemptResult> =>
        runGuarded(agent, { ...request, input, signal }, timeout, runId, clock, maxOutput, onDelta);
      return runGuarded(agent, request, timeout, runId, clock, maxOutput, onDelta)
        .then((first) => (first.ok ? verifyAttempt(policy, request, first, clock, run) : first))
        .then(held);
    }
    if (step.loopUntil !== undefined || timeout !== undefined) {
      return runGuarded(agent, request, timeout, runId, clock, maxOutput, onDelta).then(held);
    }
    // One call without a timeout (no default set): a single promise reaction, no async frame.
    let call: Promise<AgentResult>;
    try {
      call = Promise.resolve(
        agent(new AgentCall(step, request.input, runId, request, onDelta, request.onApproval)),
      );
    } catch (error) {
      return Promise.resolve(failure(errorMessage(error), 1));
    }
    return call.then(succeeded, singleFailure);
  };
}

/** An agent's output within the bound (the same object when it fits). */
function boundedOutput(output: Record<string, unknown>, maxBytes: number): Record<string, unknown> {
  return isPlainObject(output) ? boundRecord(output, maxBytes) : output;
}

function singleSuccess(result: AgentResult, maxOutput: number): AttemptResult {
  return {
    ok: true,
    output: boundedOutput(result.output, maxOutput),
    error: null,
    modelUsed: result.modelUsed,
    tokensUsed: result.tokensUsed,
    iterations: 1,
    ...(result.messages === undefined ? {} : { messages: result.messages }),
  };
}

/** A successful result with its output as the run keeps it; a refusal fails the attempt. */
function heldResult(
  result: AttemptResult,
  hold: (output: Record<string, unknown>) => Record<string, unknown>,
): AttemptResult {
  if (!result.ok || result.output === null) return result;
  try {
    // Results here are the runner's own fresh objects: no copy per step.
    result.output = hold(result.output);
    return result;
  } catch (error) {
    return { ...result, ok: false, output: null, error: errorMessage(error) };
  }
}

function singleFailure(error: unknown): AttemptResult {
  return withFailureDetail(failure(errorMessage(error), 1), error);
}

/**
 * A failed attempt with what its agent had done: the model and tokens of an answer that could
 * not be used, and a failed agent loop's messages.
 */
function withFailureDetail(result: AttemptResult, error: unknown): AttemptResult {
  if (!(error instanceof AgentFailure)) return result;
  return {
    ...result,
    modelUsed: result.modelUsed ?? error.modelUsed,
    tokensUsed: addUsage(result.tokensUsed, error.tokensUsed),
    ...(error.messages.length === 0 ? {} : { messages: error.messages }),
  };
}

/** An attempt with `loop_until` iterations and/or a step timeout (`timeoutSeconds`). */
async function runGuarded(
  agent: Agent,
  request: Parameters<AttemptRunner>[0],
  timeoutSeconds: number | undefined,
  runId: string,
  clock: EngineClock,
  maxOutput: number,
  onDelta: AttemptRunnerOptions['onDelta'],
): Promise<AttemptResult> {
  const { step, scope } = request;
  const guard =
    timeoutSeconds === undefined ? undefined : new AttemptGuard(request, timeoutSeconds, clock);
  const signalSource = guard ?? request;
  let iterations = 0;
  let tokens: TokenUsage | null = null;
  let last: AgentResult | undefined;
  let input = request.input;
  try {
    const loopMax = step.loopUntil === undefined ? 1 : (step.loopMax ?? DEFAULT_LOOP_MAX);
    for (;;) {
      iterations++;
      const call = agent(
        new AgentCall(step, input, runId, signalSource, onDelta, request.onApproval),
      );
      last = guard === undefined ? await call : await guard.race(call);
      tokens = addUsage(tokens, last.tokensUsed);
      if (step.loopUntil === undefined || iterations >= loopMax) break;
      const loopScope = withOwnOutput(scope, step, last.output);
      if (isTruthy(step.loopUntil(loopScope))) break;
      request.onIteration?.(iterations, boundedOutput(last.output, maxOutput));
      input = asRecord(step.inputs(loopScope));
    }
    return {
      ok: true,
      output: boundedOutput(last.output, maxOutput),
      error: null,
      modelUsed: last.modelUsed,
      tokensUsed: tokens,
      iterations,
      ...(last.messages === undefined ? {} : { messages: last.messages }),
    };
  } catch (error) {
    const message = guard?.timedOut === true ? guard.message : errorMessage(error);
    return withFailureDetail(
      { ...failure(message, iterations), modelUsed: last?.modelUsed ?? null, tokensUsed: tokens },
      error,
    );
  } finally {
    guard?.dispose();
  }
}

/**
 * What an agent is called with. Its `signal` is read from `source` when the agent reads it: the
 * engines make the run's signal only when something reads it (most tier-0 agents never do).
 */
class AgentCall implements AgentRequest {
  readonly #source: { readonly signal: AbortSignal };
  readonly #onDelta: AttemptRunnerOptions['onDelta'];
  readonly #onApproval: ((waiting: boolean) => void) | undefined;

  constructor(
    readonly step: CompiledStep,
    readonly input: Record<string, unknown>,
    readonly runId: string,
    source: { readonly signal: AbortSignal },
    onDelta: AttemptRunnerOptions['onDelta'],
    onApproval: ((waiting: boolean) => void) | undefined,
  ) {
    this.#source = source;
    this.#onDelta = onDelta;
    this.#onApproval = onApproval;
  }

  get signal(): AbortSignal {
    return this.#source.signal;
  }

  /** A method, not a per-call closure: most agents never stream. */
  emitDelta(text: string): void {
    this.#onDelta?.(this.step.name, text);
  }

  /** The engine's `onApproval` of this attempt (steps with tools), read when a call waits. */
  onApproval(waiting: boolean): void {
    this.#onApproval?.(waiting);
  }
}

/**
 * The step timeout: a timer, a signal combining the run's and the timeout's, and a race against
 * agents that ignore it. The signal is made when first read (so is the run's, through it): every
 * step has a timeout by default, and most tier-0 agents never read their signal.
 */
class AttemptGuard {
  readonly message: string;
  timedOut = false;
  readonly #run: { readonly signal: AbortSignal };
  readonly #seconds: number;
  readonly #timer: unknown;
  readonly #clock: EngineClock;
  #controller: AbortController | undefined;
  #signal: AbortSignal | undefined;
  #onTimeout: ((error: Error) => void) | undefined;

  constructor(run: { readonly signal: AbortSignal }, seconds: number, clock: EngineClock) {
    this.#run = run;
    this.#seconds = seconds;
    this.#clock = clock;
    this.message = stepTimeoutMessage(seconds);
    this.#timer = clock.setTimeout(() => {
      this.timedOut = true;
      const error = new StepTimeoutError(seconds);
      this.#controller?.abort(error);
      this.#onTimeout?.(error);
    }, seconds * 1000);
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) {
      this.#controller = new AbortController();
      if (this.timedOut) this.#controller.abort(new StepTimeoutError(this.#seconds));
      this.#signal = AbortSignal.any([this.#run.signal, this.#controller.signal]);
    }
    return this.#signal;
  }

  race<T>(promise: Promise<T>): Promise<T> {
    // The run's abort is always raced: an agent that ignores its signal (or never reads it)
    // must not keep the attempt, and this guard's timer, alive after the run was cancelled: a
    // cancelled run's end waited for the step timeout (30 min by default) that way. Reading the
    // run's signal makes it once per run; the combined signal is made only when the agent reads it.
    const signal = this.#signal ?? this.#run.signal;
    // One listener per running step of the run: a fan-out of more than 10 is not a leak.
    if (signal !== this.#signal) setMaxListeners(0, signal);
    return new Promise<T>((resolve, reject) => {
      if (this.timedOut) {
        reject(new StepTimeoutError(this.#seconds));
        return;
      }
      const onAbort = (): void => reject(toError(signal.reason));
      if (signal.aborted) {
        onAbort();
        return;
      }
      this.#onTimeout = reject;
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (): void => {
        this.#onTimeout = undefined;
        signal.removeEventListener('abort', onAbort);
      };
      promise.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(toError(error));
        },
      );
    });
  }

  dispose(): void {
    this.#clock.clearTimeout(this.#timer);
  }
}

function withOwnOutput(
  scope: EvalScope,
  step: CompiledStep,
  output: Record<string, unknown> | null,
): EvalScope {
  // A copy, not a prototype chain: evaluators may check own properties. Loops are rare.
  const steps: Record<string, StepView> = {
    ...scope.steps,
    [step.name]: { status: 'success', outputs: output },
  };
  return { inputs: scope.inputs, context: scope.context, steps };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function abortMessage(signal: AbortSignal): string {
  return errorMessage(signal.reason);
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(errorMessage(value));
}

function failure(error: string, iterations: number): AttemptResult {
  return { ok: false, output: null, error, modelUsed: null, tokensUsed: null, iterations };
}
