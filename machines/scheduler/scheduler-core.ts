/**
 * The scheduling core both engines share: join counters, the ready queue in YAML order (the
 * concurrency limit), retries, approval waits and `engine.abort`, over per-step numbers in one
 * plain array (`step-slots.ts`, `ready-heap.ts`); outcomes come from `step-outcomes.ts`, skips from
 * `skip-propagation.ts`. Every per-event operation is O(1) or O(log n) (abort, rare, scans once).
 * Semantics are ARCHITECTURE §6 and the adapter contract (`machines/engine-contract.ts`); both engines
 * run this code, so they produce the same event sequence for the same run.
 *
 * The core decides; the engines are its actors. What it started comes back as the one internal
 * vocabulary of `step-events.ts` (`step.settled` / `step.retry` / `step.iteration` /
 * `step.approval`, addressed by `index`): the core sends them to its actor through
 * {@link SchedulerCore.send} and the actor hands each back to {@link SchedulerCore.receive} inside
 * a transition. Engine events collect in an outbox that the actor empties once per transition
 * ({@link SchedulerCore.takeEmitted}):
 * - the native scheduler (`native-scheduler.logic.ts`, a custom `ActorLogic`) emits the outbox
 *   with `actorScope.emit` at the end of each transition;
 * - the graph machine (`graph-run.ts`, `graph.machine.ts`, `graph.logic.ts`) emits it after each
 *   step event and shows each step's {@link SchedulerCore.stepStatus} as its region's state (what
 *   the regions' guards read; `graph.logic.ts` reads it for the steps an event touched).
 *
 * The state is mutable and private to the actor that owns it. Pure: imports types only;
 * truthiness comes in through {@link SchedulerDeps}. */
import {
  notifyObserver,
  STEP_INTERRUPTED,
  type AttemptResult,
  type EngineEmitted,
  type EngineEvent,
  type EngineInput,
  type EngineOutput,
  type EngineSeed,
  type StepOutcome,
} from '../engine-contract.js';
import type { CompiledStep, EvalScope, StepView } from '../../src/workflow/types.js';
import { Attempt } from './attempt-request.js';
import { heapPop, heapPush } from './ready-heap.js';
import { clearRetryTimer } from './retry-timers.js';
import { conditionValues, type EngineFacts, type StepFacts } from './step-waits.js';
import { RunAbort } from './run-abort.js';
import {
  STEP_APPROVAL,
  STEP_ITERATION,
  STEP_RETRY,
  STEP_SETTLED,
  type StepEvent,
} from './step-events.js';
import { addUsage } from '../../src/llm/types.js';
import {
  collectDependents,
  collectPending,
  SKIP_CONDITION_FALSE,
  SKIP_UNMET_DEPENDENCIES,
} from './skip-propagation.js';
import {
  failedOutcome,
  messageOf,
  skippedOutcome,
  successOutcome,
  thrownResult,
} from './step-outcomes.js';
import {
  F_ATTEMPT,
  F_ATTEMPT_START,
  F_REMAINING,
  F_START,
  F_STATE,
  FIELDS,
  FINISHED,
  PENDING,
  RETRY_WAIT,
  RUNNING,
  stepStatuses,
  zeros,
} from './step-slots.js';

export type { AttemptRequest } from './attempt-request.js';
export { Attempt } from './attempt-request.js';
export { SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './skip-propagation.js';

/** The states of a step: its region's states in the graph machine. */
export type StepRegionState =
  | 'pending'
  | 'running'
  | 'awaiting_approval'
  | 'awaiting_input'
  | 'retrying'
  | StepOutcome['status'];

/** What a retried step's failed attempts spent. */
type RetriedUsage = Pick<AttemptResult, 'tokensUsed' | 'modelUsed'>;

/** What a scheduler needs besides its input. */
export interface SchedulerDeps {
  /** Truthiness of a `when:` value (the expression language's rule). */
  isTruthy: (value: unknown) => boolean;
}

/** Scheduling state of one run; subclasses connect it to their actor. */
export abstract class SchedulerCore {
  protected readonly steps: readonly CompiledStep[];
  protected readonly n: number;
  /** Per-step numbers, then the ready heap's `n` slots from {@link heapBase} (`step-slots.ts`). */
  private readonly slots: number[];
  private readonly heapBase: number;
  private readonly inputs: unknown[];
  private readonly outcomes: (StepOutcome | undefined)[];
  /** Retry timers by step; made when the first retry is scheduled. */
  private timers: unknown[] | undefined;
  /** When each retry timer fires (epoch ms), by step; made with {@link timers}. */
  private retryDue: number[] | undefined;
  /**
   * The values each false `when:` read, by step (only steps it skipped): what `explain` shows.
   * Made on the first such skip.
   */
  private conditionsSeen: Map<number, Record<string, unknown>> | undefined;
  /**
   * What the failed attempts of retried steps spent (tokens, the last model), by step; made when
   * the first such attempt spent tokens. A step's outcome counts every attempt's tokens.
   */
  private retriedUsage: Map<number, RetriedUsage> | undefined;
  /**
   * Attempts already begun, by step, of the steps a seed says were interrupted, and how many
   * times each was (see {@link EngineSeed}); made only for a seeded run with such steps.
   */
  private priorAttempts: number[] | undefined;
  private interruptions: number[] | undefined;
  /** Steps whose running attempt has a tool call waiting for approval (made on first use). */
  private awaiting: Set<number> | undefined;
  private heapSize = 0;
  /** Steps started and not finished (attempts in flight and retry waits). */
  private running = 0;
  private finishedCount = 0;
  private aborted = false;
  /** The run's abort signal, made only if something reads it (see {@link RunAbort}). */
  private readonly runAbort = new RunAbort();
  private readonly views: Record<string, StepView> = {};
  private readonly context: Record<string, unknown> = {};
  private readonly scope: EvalScope;
  /**
   * Engine events not yet handed to the actor's observers (see {@link takeEmitted}): the first in
   * {@link pendingFirst}, all of them in {@link pendingAll} once there is a second (most
   * transitions emit one or two; nothing is kept after they are taken).
   */
  private pendingFirst: EngineEvent | undefined = undefined;
  private pendingAll: EngineEvent[] | undefined = undefined;

  constructor(
    protected readonly input: EngineInput,
    private readonly deps: SchedulerDeps,
  ) {
    this.steps = input.workflow.steps;
    const n = (this.n = this.steps.length);
    this.heapBase = n * FIELDS;
    this.slots = zeros(n * (FIELDS + 1));
    this.inputs = new Array<unknown>(n).fill(null);
    this.outcomes = new Array<StepOutcome | undefined>(n);
    for (let i = 0; i < n; i++) {
      this.slots[i * FIELDS + F_REMAINING] = this.steps[i]!.dependsOnIndex.length;
    }
    this.scope = { inputs: input.inputs, steps: this.views, context: this.context };
  }

  /**
   * Delivers a step event (`step-events.ts`) to the actor that owns the core: an attempt's result,
   * a retry timer, a loop iteration, an approval wait. Called outside transitions (from promise
   * callbacks, timers, the attempt runner); the actor hands the event back to {@link receive}.
   */
  protected abstract send(event: StepEvent): void;

  /** Applies a step event the actor received (the one entry point for all four types). */
  receive(event: StepEvent): void {
    switch (event.type) {
      case STEP_SETTLED:
        this.onResult(event.index, event.attempt, event.result);
        break;
      case STEP_RETRY:
        this.retry(event.index);
        break;
      case STEP_ITERATION:
        this.iteration(event.index, event.attempt, event.iteration, event.output);
        break;
      case STEP_APPROVAL:
        this.approval(event.index, event.attempt, event.waiting);
        break;
    }
  }

  /** Whether engine events are waiting in the outbox. */
  get hasEmitted(): boolean {
    return this.pendingFirst !== undefined;
  }

  /**
   * The pending engine events as one emitted event, and the outbox emptied: the event itself when
   * one is pending, else an `engine.batch` of them in order (one XState emit per transition
   * instead of one per event). The input's observer gets them here, one at a time, so every path
   * that drains the outbox (native flush, the graph logic, the graph machine's `emitEvents`)
   * reaches it.
   */
  takeEmitted(): EngineEmitted {
    const first = this.pendingFirst;
    const all = this.pendingAll;
    this.pendingFirst = undefined;
    this.pendingAll = undefined;
    const emitted: EngineEmitted =
      all !== undefined
        ? { type: 'engine.batch', events: all }
        : (first ?? { type: 'engine.batch', events: [] });
    const observer = this.input.observer;
    if (observer !== undefined) notifyObserver(observer, emitted);
    return emitted;
  }

  /**
   * Reports the seeded steps finished (see {@link EngineSeed}), queues the steps whose
   * dependencies are all finished and starts as many as the limit allows.
   */
  begin(): void {
    const seed = this.input.seed;
    if (seed !== undefined) this.applySeed(seed);
    for (let i = 0; i < this.n; i++) {
      if (
        this.slots[i * FIELDS + F_REMAINING] === 0 &&
        this.slots[i * FIELDS + F_STATE] === PENDING
      )
        this.push(i);
    }
    this.pump();
    // A seed can leave steps that nothing will release (a seeded failure's dependents are
    // skipped above; this catches a seed that is not a state the run could have reached).
    if (seed !== undefined) this.settleIfStuck();
  }

  /**
   * The seeded steps finished as they finished in the run they come from, in YAML order and
   * before anything starts: outcome and view kept, `outputs:` written into the context, the join
   * counters of their dependents counted down (a success, or a skip by a false `when:`, as
   * {@link succeed} and {@link pump} release), the dependents of a seeded failure skipped (as
   * {@link failStep} does). Dependents are queued by {@link begin}, not here, so no step is queued
   * twice.
   */
  private applySeed(seed: EngineSeed): void {
    const failed: number[] = [];
    for (let i = 0; i < this.n; i++) {
      const step = this.steps[i]!;
      const outcome = seed.steps.get(step.name);
      if (outcome === undefined) {
        const prior = seed.attempts?.get(step.name) ?? 0;
        if (prior > 0) {
          (this.priorAttempts ??= zeros(this.n))[i] = prior;
          (this.interruptions ??= zeros(this.n))[i] = Math.max(
            1,
            seed.interruptions?.get(step.name) ?? 1,
          );
        }
        continue;
      }
      this.inputs[i] = outcome.input;
      if (outcome.status === 'success') {
        for (const key in step.outputs) {
          if (!Object.hasOwn(step.outputs, key)) continue;
          this.context[step.outputs[key]!] = outcome.output?.[key] ?? null;
        }
      }
      this.finishStep(i, outcome, true);
      if (
        outcome.status === 'success' ||
        (outcome.status === 'skipped' && outcome.skipReason === SKIP_CONDITION_FALSE)
      ) {
        for (const d of step.dependentsIndex) this.slots[d * FIELDS + F_REMAINING]!--;
      } else if (outcome.status === 'failed') failed.push(i);
    }
    if (failed.length === 0) return;
    const skipped: number[] = [];
    const reasons = new Map<number, string>();
    for (const i of failed) collectDependents(this.steps, this.slots, i, skipped, reasons);
    this.emitSkips(skipped, reasons, this.input.clock.now());
  }

  /** Whether every step finished (succeeded, failed or skipped). */
  get allFinished(): boolean {
    return this.finishedCount === this.n;
  }

  /** Whether a failed attempt may be followed by another. */
  canRetry(index: number, attempt: number): boolean {
    // Each interruption of the step (a seeded run) gave back the attempt it cut.
    return attempt < this.maxAttemptsOf(index) + (this.interruptions?.[index] ?? 0);
  }

  private maxAttemptsOf(index: number): number {
    return this.steps[index]!.maxAttempts ?? this.input.maxAttempts;
  }

  /** Whether `attempt` is the attempt of step `index` now running (late results are ignored). */
  isCurrent(index: number, attempt: number): boolean {
    return (
      this.slots[index * FIELDS + F_STATE] === RUNNING &&
      this.slots[index * FIELDS + F_ATTEMPT] === attempt
    );
  }

  /** An attempt settled: success, retry or failure. */
  onResult(index: number, attempt: number, result: AttemptResult): void {
    if (result.ok) this.succeed(index, attempt, result);
    else if (this.canRetry(index, attempt)) this.scheduleRetry(index, attempt, result);
    else this.fail(index, attempt, result);
  }

  /** A successful attempt: outputs mapping, `step.finished`, dependents released. */
  succeed(index: number, attempt: number, result: AttemptResult): void {
    if (!this.isCurrent(index, attempt)) return;
    this.running--;
    const step = this.steps[index]!;
    const output = result.output;
    for (const key in step.outputs) {
      if (!Object.hasOwn(step.outputs, key)) continue;
      this.context[step.outputs[key]!] = output?.[key] ?? null;
    }
    this.finishStep(
      index,
      successOutcome(
        this.inputs[index],
        this.withRetriedUsage(index, result),
        attempt,
        this.slots[index * FIELDS + F_START]!,
        this.input.clock.now(),
      ),
    );
    this.release(step);
    this.pump();
    this.settleIfStuck();
  }

  /** A failed attempt with attempts left: `step.retrying`, then `step.retry` after the delay. */
  scheduleRetry(index: number, attempt: number, result: AttemptResult): void {
    if (!this.isCurrent(index, attempt)) return;
    const now = this.input.clock.now();
    const delayMs = this.input.retryDelayMs(attempt);
    this.slots[index * FIELDS + F_STATE] = RETRY_WAIT;
    if (result.tokensUsed !== null) {
      const spent = (this.retriedUsage ??= new Map<number, RetriedUsage>()).get(index);
      this.retriedUsage.set(index, {
        tokensUsed: addUsage(spent?.tokensUsed ?? null, result.tokensUsed),
        modelUsed: result.modelUsed ?? spent?.modelUsed ?? null,
      });
    }
    this.emit({
      type: 'step.retrying',
      index,
      attempt,
      error: result.error ?? 'failed',
      delayMs,
      time: now,
      durationMs: now - this.slots[index * FIELDS + F_ATTEMPT_START]!,
    });
    (this.retryDue ??= new Array<number>(this.n).fill(0))[index] = now + delayMs;
    (this.timers ??= new Array<unknown>(this.n))[index] = this.input.clock.setTimeout(
      () => this.send({ type: STEP_RETRY, index }),
      delayMs,
    );
  }

  /** The retry delay elapsed: the next attempt starts. */
  retry(index: number): void {
    if (this.slots[index * FIELDS + F_STATE] !== RETRY_WAIT) return;
    if (this.timers !== undefined) this.timers[index] = undefined;
    this.startAttempt(index, this.slots[index * FIELDS + F_ATTEMPT]! + 1);
  }

  /** A failed last attempt: the step fails and its transitive dependents are skipped. */
  fail(index: number, attempt: number, result: AttemptResult): void {
    if (!this.isCurrent(index, attempt)) return;
    this.running--;
    this.failStep(index, result.error ?? 'failed', attempt, result, this.input.clock.now());
    this.pump();
    this.settleIfStuck();
  }

  /** A loop iteration of the running attempt finished: `step.iteration`. */
  iteration(
    index: number,
    attempt: number,
    iteration: number,
    output: Record<string, unknown> | null,
  ): void {
    if (!this.isCurrent(index, attempt)) return;
    this.emit({ type: 'step.iteration', index, iteration, output, time: this.input.clock.now() });
  }

  /**
   * A tool call of attempt `attempt` of step `index` started (`waiting`) or stopped waiting for
   * the approval gate (ignored once that attempt is no longer the running one). No engine event:
   * the approval events are the session's; this is the step's status
   * ({@link stepStatus} `awaiting_approval`).
   */
  approval(index: number, attempt: number, waiting: boolean): void {
    if (waiting && this.isCurrent(index, attempt)) (this.awaiting ??= new Set()).add(index);
    else this.awaiting?.delete(index);
  }

  /** Fails running steps with `reason`, skips everything unfinished. */
  abort(reason: string): void {
    if (this.aborted || this.allFinished) return;
    this.aborted = true;
    this.runAbort.abort(new Error(reason));
    const now = this.input.clock.now();
    const failed: number[] = [];
    for (let i = 0; i < this.n; i++) {
      const state = this.slots[i * FIELDS + F_STATE];
      if (state !== RUNNING && state !== RETRY_WAIT) continue;
      clearRetryTimer(this.input.clock, this.timers, i);
      this.running--;
      failed.push(i);
      const attempts = this.slots[i * FIELDS + F_ATTEMPT]!;
      const start = this.slots[i * FIELDS + F_START]!;
      const result = this.withRetriedUsage(i, null);
      this.finishStep(i, failedOutcome(this.inputs[i], reason, attempts, result, start, now));
    }
    const skipped: number[] = [];
    const reasons = new Map<number, string>();
    for (const i of failed) collectDependents(this.steps, this.slots, i, skipped, reasons);
    collectPending(this.n, this.slots, reason, skipped, reasons);
    this.emitSkips(skipped, reasons, now);
    this.heapSize = 0;
  }

  /** The engine output: outcomes, context variables, the workflow outputs. */
  output(): EngineOutput {
    return {
      outcomes: this.outcomes as StepOutcome[],
      context: this.context,
      finalOutput: this.input.workflow.outputs(this.scope) as Record<string, unknown>,
    };
  }

  /** Cancels retry timers and in-flight attempts (the run finished or its actor was stopped). */
  dispose(): void {
    if (this.timers !== undefined)
      for (let i = 0; i < this.n; i++) clearRetryTimer(this.input.clock, this.timers, i);
    // Nothing is in flight once every step finished (`running` counts retry waits too); an Error
    // (and its stack) per run is then not worth making.
    if (this.running > 0 && !this.runAbort.aborted)
      this.runAbort.abort(new Error('engine stopped'));
  }

  /**
   * Step `index`'s status: `pending`, `running` (`awaiting_approval` while a tool call of its
   * attempt waits for the approval gate, `awaiting_input` while a human step's question waits),
   * `retrying`, or its outcome's status once finished (what
   * the graph machine's step regions show).
   */
  stepStatus(index: number): StepRegionState {
    const outcome = this.outcomes[index];
    if (outcome !== undefined) return outcome.status;
    const state = this.slots[index * FIELDS + F_STATE];
    if (state === RUNNING) {
      if (this.awaiting?.has(index) !== true) return 'running';
      return this.input.workflow.steps[index]?.kind === 'human'
        ? 'awaiting_input'
        : 'awaiting_approval';
    }
    return state === RETRY_WAIT ? 'retrying' : 'pending';
  }

  /** Why step `index` was skipped (null unless it was). */
  skipReason(index: number): string | null {
    return this.outcomes[index]?.skipReason ?? null;
  }

  /** Each step's status (outcome status once finished) by name. */
  stepStates(): Record<string, string> {
    return stepStatuses(this.steps, this.outcomes, this.slots);
  }

  /**
   * What the scheduler knows of each step that has not succeeded (`step-waits.ts`), read now:
   * O(steps + dependencies), only when asked.
   */
  facts(): EngineFacts {
    const steps: StepFacts[] = [];
    for (let i = 0; i < this.n; i++) {
      const outcome = this.outcomes[i];
      if (outcome?.status === 'success') continue;
      const step = this.steps[i]!;
      const status = this.stepStatus(i);
      const base = i * FIELDS;
      const pending = status === 'pending';
      const waitingFor = [];
      if (pending) {
        for (const d of step.dependsOnIndex)
          if (this.outcomes[d] === undefined)
            waitingFor.push({ step: this.steps[d]!.name, status: this.stepStatus(d) });
      }
      const running = outcome === undefined && !pending;
      steps.push({
        index: i,
        name: step.name,
        status,
        attempt: outcome?.attempts ?? this.slots[base + F_ATTEMPT]!,
        maxAttempts: step.maxAttempts ?? this.input.maxAttempts,
        attemptStartedAt: running ? this.slots[base + F_ATTEMPT_START]! : null,
        waitingFor,
        ready: pending && waitingFor.length === 0 && !this.aborted,
        retryAt: status === 'retrying' ? (this.retryDue?.[i] ?? null) : null,
        conditionValues: this.conditionsSeen?.get(i) ?? null,
        skipReason: outcome?.skipReason ?? null,
        error: outcome?.error ?? null,
      });
    }
    return {
      runId: this.input.runId,
      workflow: this.input.workflow.name,
      now: this.input.clock.now(),
      running: this.running,
      maxConcurrency: this.input.maxConcurrency,
      finished: this.finishedCount,
      total: this.n,
      steps,
    };
  }

  /** What an inspector shows: progress, not the closures of the input. */
  toJSON(): unknown {
    return {
      running: this.running,
      finished: this.finishedCount,
      total: this.n,
      steps: this.stepStates(),
    };
  }

  /** Queues an engine event for the actor's observers (they get it with the transition's others). */
  protected emit(event: EngineEvent): void {
    const first = this.pendingFirst;
    if (first === undefined) this.pendingFirst = event;
    else if (this.pendingAll === undefined) this.pendingAll = [first, event];
    else this.pendingAll.push(event);
  }

  /** Starts ready steps in YAML order while below the concurrency limit. */
  private pump(): void {
    const limit = this.input.maxConcurrency;
    while (this.heapSize > 0 && this.running < limit && !this.aborted) {
      const index = this.pop();
      if (this.slots[index * FIELDS + F_STATE] !== PENDING) continue;
      const step = this.steps[index]!;
      if (step.when !== undefined) {
        let go: boolean;
        try {
          go = this.deps.isTruthy(step.when(this.scope));
        } catch (error) {
          this.failStep(index, `when: ${messageOf(error)}`, 0, null, this.input.clock.now());
          continue;
        }
        if (!go) {
          if (step.whenReferences !== undefined)
            (this.conditionsSeen ??= new Map()).set(
              index,
              conditionValues(step.whenReferences, this.scope),
            );
          this.finishStep(index, skippedOutcome(SKIP_CONDITION_FALSE, this.input.clock.now()));
          this.release(step);
          continue;
        }
      }
      let resolved: unknown;
      try {
        resolved = step.inputs(this.scope);
        const hold = this.input.holdInput;
        if (hold !== undefined) resolved = hold(resolved);
      } catch (error) {
        this.failStep(index, `inputs: ${messageOf(error)}`, 0, null, this.input.clock.now());
        continue;
      }
      this.inputs[index] = resolved;
      const now = this.input.clock.now();
      this.slots[index * FIELDS + F_START] = now;
      const prior = this.priorAttempts?.[index] ?? 0;
      // An attempt interrupted before this engine started (see EngineSeed): it is made again,
      // unless the step may not run twice or was interrupted more often than it may fail.
      // A human step's wait is not bounded by its interruptions: asking again has no side
      // effect, and a question may wait across many restarts (it asks once: max_attempts 1).
      if (
        prior > 0 &&
        (step.resume === 'fail' ||
          (step.kind !== 'human' && this.interruptions![index]! > this.maxAttemptsOf(index)))
      ) {
        this.failStep(index, STEP_INTERRUPTED, prior, null, now);
        continue;
      }
      this.running++;
      this.startAttempt(index, prior + 1, now);
    }
  }

  /** `time` is now when the caller already read the clock (one read per started step). */
  private startAttempt(index: number, attempt: number, time = this.input.clock.now()): void {
    const step = this.steps[index]!;
    this.slots[index * FIELDS + F_STATE] = RUNNING;
    this.slots[index * FIELDS + F_ATTEMPT] = attempt;
    this.slots[index * FIELDS + F_ATTEMPT_START] = time;
    const input = this.inputs[index];
    this.emit({ type: 'step.started', index, attempt, input, time });
    const request = new Attempt(
      step,
      (input ?? {}) as Record<string, unknown>,
      this.scope,
      attempt,
      this.runAbort,
      time,
    );
    if (step.loopUntil !== undefined)
      request.onIteration = (iteration, output) =>
        this.send({ type: STEP_ITERATION, index, attempt, iteration, output });
    // Only a step with tools has calls that can wait for approval; a human step's attempt tells
    // the same way while its question waits (awaiting_input).
    if (step.tools.length > 0 || step.kind === 'human')
      request.onApproval = (waiting) => this.send({ type: STEP_APPROVAL, index, attempt, waiting });
    this.launch(request);
  }

  /** When an attempt's runner is called: at once here; the native scheduler defers it. */
  protected launch(request: Attempt): void {
    this.launchNow(request);
  }

  /**
   * Calls the attempt runner for a started attempt; its result comes back as `step.settled`
   * (through {@link send}). The native scheduler defers this out of `transition` (see
   * `native-scheduler.logic.ts`).
   */
  protected launchNow(request: Attempt): void {
    const index = request.step.index;
    const attempt = request.attempt;
    let pending: Promise<AttemptResult>;
    try {
      pending = this.input.runAttempt(request);
    } catch (error) {
      pending = Promise.reject(error instanceof Error ? error : new Error(messageOf(error)));
    }
    // Anonymous inline callbacks: no per-attempt named closures (tsx's keepNames wraps those).
    pending.then(
      (result) => this.send({ type: STEP_SETTLED, index, attempt, result }),
      (error: unknown) =>
        this.send({ type: STEP_SETTLED, index, attempt, result: thrownResult(error) }),
    );
  }

  private failStep(
    index: number,
    error: string,
    attempts: number,
    result: AttemptResult | null,
    now: number,
  ): void {
    const start = this.slots[index * FIELDS + F_START]!;
    const counted = this.withRetriedUsage(index, result);
    this.finishStep(index, failedOutcome(this.inputs[index], error, attempts, counted, start, now));
    const skipped: number[] = [];
    const reasons = new Map<number, string>();
    collectDependents(this.steps, this.slots, index, skipped, reasons);
    this.emitSkips(skipped, reasons, now);
  }

  /**
   * `result` with the tokens of the step's earlier failed attempts added (and their model when it
   * names none): the attempt that ends the step reports what the whole step spent.
   */
  private withRetriedUsage<R extends AttemptResult | null>(
    index: number,
    result: R,
  ): R | AttemptResult {
    const spent = this.retriedUsage?.get(index);
    if (spent === undefined) return result;
    this.retriedUsage?.delete(index);
    const base = result ?? { ok: false, output: null, error: null, iterations: 0 };
    return {
      ...base,
      tokensUsed: addUsage(spent.tokensUsed, result?.tokensUsed ?? null),
      modelUsed: result?.modelUsed ?? spent.modelUsed,
    };
  }

  /** Emits skips in YAML order (they happen at the same instant). */
  private emitSkips(indexes: number[], reasons: Map<number, string>, now: number): void {
    if (indexes.length > 1) indexes.sort((a, b) => a - b);
    for (const i of indexes) this.finishStep(i, skippedOutcome(reasons.get(i)!, now));
  }

  /**
   * When nothing runs and nothing is ready but steps remain, they can never start. (`running`
   * counts steps waiting for a retry too.)
   */
  private settleIfStuck(): void {
    if (this.running > 0 || this.heapSize > 0 || this.finishedCount === this.n) return;
    const now = this.input.clock.now();
    for (let i = 0; i < this.n; i++) {
      if (this.slots[i * FIELDS + F_STATE] === PENDING)
        this.finishStep(i, skippedOutcome(SKIP_UNMET_DEPENDENCIES, now));
    }
  }

  private finishStep(index: number, outcome: StepOutcome, seeded = false): void {
    this.slots[index * FIELDS + F_STATE] = FINISHED;
    this.outcomes[index] = outcome;
    this.finishedCount++;
    this.views[this.steps[index]!.name] = new View(outcome.status, outcome.output);
    this.emit(
      seeded
        ? { type: 'step.finished', index, outcome, seeded }
        : { type: 'step.finished', index, outcome },
    );
  }

  /** The join: a finished (not failed) step counts down each dependent's unfinished dependencies. */
  private release(step: CompiledStep): void {
    for (const d of step.dependentsIndex) {
      if (
        --this.slots[d * FIELDS + F_REMAINING]! === 0 &&
        this.slots[d * FIELDS + F_STATE] === PENDING
      )
        this.push(d);
    }
  }

  private push(value: number): void {
    heapPush(this.slots, this.heapBase, this.heapSize++, value);
  }

  private pop(): number {
    return heapPop(this.slots, this.heapBase, --this.heapSize);
  }
}

/**
 * A finished step as expressions see it (`steps.<name>.status` / `.outputs`). A class, like the
 * outcomes (`step-outcomes.ts`): object literals that live as long as their run get pretenured.
 */
class View implements StepView {
  constructor(
    readonly status: StepView['status'],
    readonly outputs: StepView['outputs'],
  ) {}
}
