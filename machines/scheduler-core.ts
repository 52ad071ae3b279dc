/**
 * The scheduling core both engines share: per-step join counters, a binary heap of ready steps in
 * YAML order (the concurrency limit), per-step state in plain number arrays, outcome building,
 * skip propagation (`condition false`, `dependency failed: <step>`, `unmet dependencies`), retries
 * and `engine.abort`. Every per-event operation is O(1) or O(log n): no scan of all steps per
 * event and no copy of per-step arrays (abort, a rare event, scans once).
 *
 * Semantics are ARCHITECTURE §6 and the adapter contract (`src/engine/adapter.ts`); because both
 * engines run this code, they produce the same event sequence for the same run.
 *
 * What differs per engine is how engine events leave and how attempt results, retry timers and
 * loop iterations come back; a subclass provides that:
 * - the native scheduler (`native-scheduler.machine.ts`, a custom `ActorLogic`) emits with
 *   `actorScope.emit` and receives `step.result` / `step.retry` events;
 * - the graph machine (`graph-run.ts`, `graph-compiler.ts`) collects events for the machine's
 *   actions to emit and receives per-step event types that select the step's transitions.
 *
 * The state is mutable and private to the actor that owns it. Pure: imports types only;
 * truthiness comes in through {@link SchedulerDeps}.
 */
import type {
  AttemptResult,
  AttemptRunner,
  EngineEvent,
  EngineInput,
  EngineOutput,
  StepOutcome,
} from '../src/engine/adapter.js';
import type { CompiledStep, EvalScope, StepView } from '../src/workflow/types.js';

/** What a scheduler needs besides its input. */
export interface SchedulerDeps {
  /** Truthiness of a `when:` value (the expression language's rule). */
  isTruthy: (value: unknown) => boolean;
}

/** The request handed to the attempt runner. */
export type AttemptRequest = Parameters<AttemptRunner>[0];

/** Reason of a step skipped because its `when:` was false. */
export const SKIP_CONDITION_FALSE = 'condition false';
/** Reason of steps left when nothing runs and nothing can start. */
export const SKIP_UNMET_DEPENDENCIES = 'unmet dependencies';

const PENDING = 0;
const RUNNING = 1;
const RETRY_WAIT = 2;
const FINISHED = 3;
const STATE_NAMES = ['pending', 'running', 'retrying', 'finished'] as const;

/** Offsets of a step's numbers in `SchedulerCore.slots`, and how many there are per step. */
const F_REMAINING = 0; // unfinished dependencies
const F_STATE = 1; // PENDING … FINISHED
const F_ATTEMPT = 2; // the current attempt (1-based)
const F_START = 3; // start time of the first attempt
const F_ATTEMPT_START = 4; // start time of the current attempt
const FIELDS = 5;

/** Scheduling state of one run; subclasses connect it to their actor. */
export abstract class SchedulerCore {
  protected readonly steps: readonly CompiledStep[];
  protected readonly n: number;
  /**
   * Per-step numbers, {@link FIELDS} per step (`slots[i * FIELDS + F_STATE]` …), then the ready
   * heap's `n` slots from {@link heapBase}: one array instead of six (about 0.25 KB less per run
   * of a small workflow, which would otherwise pay an array header and backing store for each).
   */
  private readonly slots: number[];
  private readonly heapBase: number;
  private readonly inputs: unknown[];
  private readonly outcomes: (StepOutcome | undefined)[];
  /** Retry timers by step; made when the first retry is scheduled. */
  private timers: unknown[] | undefined;
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

  /** Hands an engine event to the actor's observers. */
  protected abstract emit(event: EngineEvent): void;
  /** Delivers the result of attempt `attempt` of step `index` back to the actor (asynchronously). */
  protected abstract sendSettled(index: number, attempt: number, result: AttemptResult): void;
  /** Delivers "the retry delay of step `index` elapsed" back to the actor (from a timer). */
  protected abstract sendRetry(index: number): void;
  /** The `onIteration` callback of a loop step's attempt. */
  protected abstract iterationListener(
    index: number,
    attempt: number,
  ): (iteration: number, output: Record<string, unknown> | null) => void;

  /** Queues the steps without dependencies and starts as many as the limit allows. */
  begin(): void {
    for (let i = 0; i < this.n; i++) if (this.slots[i * FIELDS + F_REMAINING] === 0) this.push(i);
    this.pump();
  }

  /** Whether every step finished (succeeded, failed or skipped). */
  get allFinished(): boolean {
    return this.finishedCount === this.n;
  }

  /** Whether a failed attempt may be followed by another. */
  canRetry(index: number, attempt: number): boolean {
    return attempt < (this.steps[index]!.maxAttempts ?? this.input.maxAttempts);
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
    this.finishStep(index, {
      status: 'success',
      input: this.inputs[index],
      output,
      error: null,
      skipReason: null,
      modelUsed: result.modelUsed,
      tokensUsed: result.tokensUsed,
      attempts: attempt,
      iterations: result.iterations,
      startTime: this.slots[index * FIELDS + F_START]!,
      endTime: this.input.clock.now(),
    });
    this.release(step);
    this.pump();
    this.settleIfStuck();
  }

  /** A failed attempt with attempts left: `step.retrying`, then {@link sendRetry} after the delay. */
  scheduleRetry(index: number, attempt: number, result: AttemptResult): void {
    if (!this.isCurrent(index, attempt)) return;
    const now = this.input.clock.now();
    const delayMs = this.input.retryDelayMs(attempt);
    this.slots[index * FIELDS + F_STATE] = RETRY_WAIT;
    this.emit({
      type: 'step.retrying',
      index,
      attempt,
      error: result.error ?? 'failed',
      delayMs,
      time: now,
      durationMs: now - this.slots[index * FIELDS + F_ATTEMPT_START]!,
    });
    (this.timers ??= new Array<unknown>(this.n))[index] = this.input.clock.setTimeout(
      () => this.sendRetry(index),
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
      this.clearTimer(i);
      this.running--;
      failed.push(i);
      this.finishStep(
        i,
        this.failedOutcome(i, reason, this.slots[i * FIELDS + F_ATTEMPT]!, null, now),
      );
    }
    const skipped: number[] = [];
    const reasons = new Map<number, string>();
    for (const i of failed) this.collectDependents(i, skipped, reasons);
    for (let i = 0; i < this.n; i++) {
      if (this.slots[i * FIELDS + F_STATE] === PENDING) {
        this.slots[i * FIELDS + F_STATE] = FINISHED;
        skipped.push(i);
        reasons.set(i, reason);
      }
    }
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
    if (this.timers !== undefined) for (let i = 0; i < this.n; i++) this.clearTimer(i);
    // Nothing is in flight once every step finished (`running` counts retry waits too); an Error
    // (and its stack) per run is then not worth making.
    if (this.running > 0 && !this.runAbort.aborted)
      this.runAbort.abort(new Error('engine stopped'));
  }

  /** Each step's status (outcome status once finished) by name. */
  stepStates(): Record<string, string> {
    const states: Record<string, string> = {};
    for (let i = 0; i < this.n; i++) {
      states[this.steps[i]!.name] =
        this.outcomes[i]?.status ?? STATE_NAMES[this.slots[i * FIELDS + F_STATE]!]!;
    }
    return states;
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
          this.finishStep(index, skippedOutcome(SKIP_CONDITION_FALSE, this.input.clock.now()));
          this.release(step);
          continue;
        }
      }
      let resolved: unknown;
      try {
        resolved = step.inputs(this.scope);
      } catch (error) {
        this.failStep(index, `inputs: ${messageOf(error)}`, 0, null, this.input.clock.now());
        continue;
      }
      this.inputs[index] = resolved;
      this.running++;
      const now = this.input.clock.now();
      this.slots[index * FIELDS + F_START] = now;
      this.startAttempt(index, 1, now);
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
    );
    if (step.loopUntil !== undefined) request.onIteration = this.iterationListener(index, attempt);
    let pending: Promise<AttemptResult>;
    try {
      pending = this.input.runAttempt(request);
    } catch (error) {
      pending = Promise.reject(error instanceof Error ? error : new Error(messageOf(error)));
    }
    // Anonymous inline callbacks: no per-attempt named closures (tsx's keepNames wraps those).
    pending.then(
      (result) => this.sendSettled(index, attempt, result),
      (error: unknown) => this.sendSettled(index, attempt, thrownResult(error)),
    );
  }

  private failStep(
    index: number,
    error: string,
    attempts: number,
    result: AttemptResult | null,
    now: number,
  ): void {
    this.finishStep(index, this.failedOutcome(index, error, attempts, result, now));
    const skipped: number[] = [];
    const reasons = new Map<number, string>();
    this.collectDependents(index, skipped, reasons);
    this.emitSkips(skipped, reasons, now);
  }

  private failedOutcome(
    index: number,
    error: string,
    attempts: number,
    result: AttemptResult | null,
    now: number,
  ): StepOutcome {
    return {
      status: 'failed',
      input: this.inputs[index] ?? null,
      output: null,
      error,
      skipReason: null,
      modelUsed: result?.modelUsed ?? null,
      tokensUsed: result?.tokensUsed ?? null,
      attempts,
      iterations: result?.iterations ?? 0,
      startTime: attempts > 0 ? this.slots[index * FIELDS + F_START]! : null,
      endTime: now,
    };
  }

  /** Marks every unfinished transitive dependent of `root` finished (skipped), collecting it. */
  private collectDependents(root: number, out: number[], reasons: Map<number, string>): void {
    const reason = `dependency failed: ${this.steps[root]!.name}`;
    const stack = [root];
    while (stack.length > 0) {
      const current = stack.pop()!;
      for (const d of this.steps[current]!.dependentsIndex) {
        if (this.slots[d * FIELDS + F_STATE] !== PENDING) continue;
        this.slots[d * FIELDS + F_STATE] = FINISHED;
        out.push(d);
        reasons.set(d, reason);
        stack.push(d);
      }
    }
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

  private finishStep(index: number, outcome: StepOutcome): void {
    this.slots[index * FIELDS + F_STATE] = FINISHED;
    this.outcomes[index] = outcome;
    this.finishedCount++;
    this.views[this.steps[index]!.name] = { status: outcome.status, outputs: outcome.output };
    this.emit({ type: 'step.finished', index, outcome });
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

  private clearTimer(index: number): void {
    const timers = this.timers;
    const timer = timers?.[index];
    if (timers === undefined || timer === undefined) return;
    this.input.clock.clearTimeout(timer);
    timers[index] = undefined;
  }

  private push(value: number): void {
    const heap = this.slots;
    const base = this.heapBase;
    let i = this.heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[base + parent]! <= value) break;
      heap[base + i] = heap[base + parent]!;
      i = parent;
    }
    heap[base + i] = value;
  }

  private pop(): number {
    const heap = this.slots;
    const base = this.heapBase;
    const top = heap[base]!;
    const last = heap[base + --this.heapSize]!;
    const size = this.heapSize;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[base + child + 1]! < heap[base + child]!) child++;
      if (heap[base + child]! >= last) break;
      heap[base + i] = heap[base + child]!;
      i = child;
    }
    heap[base + i] = last;
    return top;
  }
}

/**
 * The run's abort signal, made when first read. Most runs are never aborted and most agents
 * (tier 0) never read the signal, while an AbortController and its signal cost about 0.85 KB
 * (the signal's listener maps and its own hidden class). Aborting before the signal exists
 * remembers the reason; a signal made later is aborted with it at once, so a reader sees the
 * same thing either way.
 */
class RunAbort {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  /** Whether the run was aborted (without making the signal). */
  get aborted(): boolean {
    return this.reason !== undefined;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** The request of one attempt; its `signal` is the run's, made when first read. */
class Attempt implements AttemptRequest {
  readonly #runAbort: RunAbort;
  declare onIteration?: (iteration: number, output: Record<string, unknown> | null) => void;

  constructor(
    readonly step: CompiledStep,
    readonly input: Record<string, unknown>,
    readonly scope: EvalScope,
    readonly attempt: number,
    runAbort: RunAbort,
  ) {
    this.#runAbort = runAbort;
  }

  get signal(): AbortSignal {
    return this.#runAbort.signal;
  }

  get aborted(): boolean {
    return this.#runAbort.aborted;
  }
}

/** The result of an attempt whose runner threw or rejected (runners should not, but may). */
function thrownResult(error: unknown): AttemptResult {
  return {
    ok: false,
    output: null,
    error: messageOf(error),
    modelUsed: null,
    tokensUsed: null,
    iterations: 0,
  };
}

/**
 * An array of `n` zeros, allocated at its exact length. Plain arrays rather than typed arrays: a
 * run of a small workflow would otherwise pay for several ArrayBuffers (about 180 bytes each
 * before any data); `push` would over-allocate (capacity 17 for 5 steps).
 */
function zeros(n: number): number[] {
  return new Array<number>(n).fill(0);
}

function skippedOutcome(reason: string, now: number): StepOutcome {
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

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : 'unknown error';
}
