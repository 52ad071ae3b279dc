/**
 * The native engine: a dependency-counting scheduler written as XState v5 actor logic (a custom
 * `ActorLogic` object). It keeps, per step, the number of unfinished dependencies; a step whose
 * count reaches zero enters a ready heap ordered by YAML position, and at most `maxConcurrency`
 * steps run at once. Every per-event operation is O(1) or O(log n) (counters, number arrays, a
 * binary heap): no scan of all steps per event and no copy of per-step arrays.
 *
 * The scheduling state is mutable and private to the actor (it lives in `snapshot.core`, which
 * nothing outside reads). Step attempts are started inside `start`/`transition`, the same way
 * XState's own promise logic starts its promise; their results come back as `step.result`
 * events, retries as `step.retry` events from the injected clock. Engine events are emitted with
 * `actorScope.emit` for observers (`actor.on('*', ...)`).
 *
 * Pure: imports xstate and types only; truthiness is passed in by the adapter.
 */
import type { ActorLogic, ActorScope, ActorSystem, AnyEventObject, Snapshot } from 'xstate';
import type {
  AttemptResult,
  AttemptRunner,
  EngineEvent,
  EngineInput,
  EngineOutput,
  StepOutcome,
} from '../src/engine/adapter.js';
import type { CompiledStep, EvalScope, StepView } from '../src/workflow/types.js';

/** Events the native scheduler handles (`engine.abort` from the run actor; the rest internal). */
export type NativeSchedulerEvent =
  | { type: 'engine.abort'; reason: string }
  | { type: 'step.result'; index: number; attempt: number; result: AttemptResult }
  | { type: 'step.retry'; index: number }
  | { type: 'engine.settle' }
  | { type: 'xstate.stop' };

/** The scheduler's snapshot: XState status/output plus the private scheduling core. */
export type NativeSchedulerSnapshot = Snapshot<EngineOutput> & { core: SchedulerCore };

/** Receives any event (it is invoked by a machine); acts on {@link NativeSchedulerEvent}s. */
export type NativeSchedulerLogic = ActorLogic<
  NativeSchedulerSnapshot,
  AnyEventObject,
  EngineInput,
  System,
  EngineEvent
>;

export interface NativeSchedulerDeps {
  /** Truthiness of a `when:` value (the expression language's rule). */
  isTruthy: (value: unknown) => boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- XState's own AnyActorSystem (not exported)
type System = ActorSystem<any>;
type AttemptRequest = Parameters<AttemptRunner>[0];
type Scope = ActorScope<NativeSchedulerSnapshot, AnyEventObject, System, EngineEvent>;

const PENDING = 0;
const RUNNING = 1;
const RETRY_WAIT = 2;
const FINISHED = 3;
const STATE_NAMES = ['pending', 'running', 'retrying', 'finished'] as const;

/** Reason of a step skipped because its `when:` was false. */
export const SKIP_CONDITION_FALSE = 'condition false';
/** Reason of steps left when nothing runs and nothing can start. */
export const SKIP_UNMET_DEPENDENCIES = 'unmet dependencies';

/** Creates the native scheduler's actor logic. One logic serves every workflow and run. */
export function createNativeSchedulerLogic(deps: NativeSchedulerDeps): NativeSchedulerLogic {
  return {
    config: { name: 'native-scheduler' },
    getInitialSnapshot(actorScope, input) {
      return {
        status: 'active',
        output: undefined,
        error: undefined,
        core: new SchedulerCore(input, actorScope, deps),
      };
    },
    start(snapshot) {
      snapshot.core.begin();
    },
    transition(snapshot, anyEvent) {
      if (snapshot.status !== 'active') return snapshot;
      const event = anyEvent as NativeSchedulerEvent;
      const core = snapshot.core;
      switch (event.type) {
        case 'step.result':
          core.onResult(event.index, event.attempt, event.result);
          break;
        case 'step.retry':
          core.onRetry(event.index);
          break;
        case 'engine.abort':
          core.abort(event.reason);
          break;
        case 'engine.settle':
          break;
        case 'xstate.stop':
          core.dispose();
          return { ...snapshot, status: 'stopped' };
        default:
          return snapshot;
      }
      if (!core.isComplete()) return snapshot;
      core.dispose();
      return { status: 'done', output: core.output(), error: undefined, core };
    },
    getPersistedSnapshot(snapshot) {
      return {
        status: snapshot.status,
        output: snapshot.output,
        error: snapshot.error,
        steps: snapshot.core.stepStates(),
      } as Snapshot<unknown>;
    },
  };
}

/** Scheduling state of one run. Mutated only from the actor's `start` and `transition`. */
class SchedulerCore {
  private readonly steps: readonly CompiledStep[];
  private readonly n: number;
  private readonly remaining: number[];
  private readonly state: number[];
  private readonly attempt: number[];
  private readonly startTime: number[];
  private readonly attemptStart: number[];
  private readonly inputs: unknown[];
  private readonly outcomes: (StepOutcome | undefined)[];
  /** Retry timers by step; made when the first retry is scheduled. */
  private timers: unknown[] | undefined;
  private readonly heap: number[];
  private heapSize = 0;
  private running = 0;
  private finished = 0;
  private aborted = false;
  private readonly controller = new AbortController();
  private readonly views: Record<string, StepView> = {};
  private readonly context: Record<string, unknown> = {};
  private readonly scope: EvalScope;

  constructor(
    private readonly input: EngineInput,
    private readonly actorScope: Scope,
    private readonly deps: NativeSchedulerDeps,
  ) {
    this.steps = input.workflow.steps;
    const n = (this.n = this.steps.length);
    this.remaining = zeros(n);
    this.state = zeros(n);
    this.attempt = zeros(n);
    this.startTime = zeros(n);
    this.attemptStart = zeros(n);
    this.inputs = new Array<unknown>(n).fill(null);
    this.outcomes = new Array<StepOutcome | undefined>(n);
    this.heap = zeros(n);
    for (let i = 0; i < n; i++) this.remaining[i] = this.steps[i]!.dependsOnIndex.length;
    this.scope = { inputs: input.inputs, steps: this.views, context: this.context };
  }

  /** Queues the root steps and starts as many as the limit allows. */
  begin(): void {
    for (let i = 0; i < this.n; i++) if (this.remaining[i] === 0) this.push(i);
    this.pump();
    // A run can finish inside `start` (every step skipped); a self-event lets `transition`
    // report the done snapshot.
    if (this.isComplete()) this.actorScope.self.send({ type: 'engine.settle' });
  }

  isComplete(): boolean {
    return this.finished === this.n;
  }

  onResult(index: number, attempt: number, result: AttemptResult): void {
    if (this.state[index] !== RUNNING || this.attempt[index] !== attempt) return;
    const now = this.input.clock.now();
    const step = this.steps[index]!;
    if (result.ok) {
      this.running--;
      this.complete(index, {
        status: 'success',
        input: this.inputs[index],
        output: result.output,
        error: null,
        skipReason: null,
        modelUsed: result.modelUsed,
        tokensUsed: result.tokensUsed,
        attempts: attempt,
        iterations: result.iterations,
        startTime: this.startTime[index]!,
        endTime: now,
      });
    } else if (attempt < (step.maxAttempts ?? this.input.maxAttempts)) {
      const delayMs = this.input.retryDelayMs(attempt);
      this.state[index] = RETRY_WAIT;
      this.actorScope.emit({
        type: 'step.retrying',
        index,
        attempt,
        error: result.error ?? 'failed',
        delayMs,
        time: now,
        durationMs: now - this.attemptStart[index]!,
      });
      const self = this.actorScope.self;
      (this.timers ??= new Array<unknown>(this.n))[index] = this.input.clock.setTimeout(
        () => self.send({ type: 'step.retry', index }),
        delayMs,
      );
      return;
    } else {
      this.running--;
      this.fail(index, result.error ?? 'failed', attempt, result, now);
    }
    this.pump();
    this.settleIfStuck();
  }

  onRetry(index: number): void {
    if (this.state[index] !== RETRY_WAIT) return;
    if (this.timers !== undefined) this.timers[index] = undefined;
    this.startAttempt(index, this.attempt[index]! + 1);
  }

  /** Fails running steps with `reason`, skips everything unfinished, and completes. */
  abort(reason: string): void {
    if (this.aborted || this.isComplete()) return;
    this.aborted = true;
    this.controller.abort(new Error(reason));
    const now = this.input.clock.now();
    const failed: number[] = [];
    for (let i = 0; i < this.n; i++) {
      const state = this.state[i];
      if (state !== RUNNING && state !== RETRY_WAIT) continue;
      this.clearTimer(i);
      this.running--;
      failed.push(i);
      this.finishStep(i, this.failedOutcome(i, reason, this.attempt[i]!, null, now));
    }
    const skipped: number[] = [];
    const reasons = new Map<number, string>();
    for (const i of failed) this.collectDependents(i, skipped, reasons);
    for (let i = 0; i < this.n; i++) {
      if (this.state[i] === PENDING) {
        this.state[i] = FINISHED;
        skipped.push(i);
        reasons.set(i, reason);
      }
    }
    this.emitSkips(skipped, reasons, now);
    this.heapSize = 0;
  }

  output(): EngineOutput {
    return {
      outcomes: this.outcomes as StepOutcome[],
      context: this.context,
      finalOutput: this.input.workflow.outputs(this.scope) as Record<string, unknown>,
    };
  }

  /** Cancels retry timers and in-flight attempts (stop, or completion). */
  dispose(): void {
    if (this.timers !== undefined) for (let i = 0; i < this.n; i++) this.clearTimer(i);
    // Nothing is in flight once every step finished (`running` counts retry waits too); an Error
    // (and its stack) per run is then not worth making.
    if (this.running > 0 && !this.controller.signal.aborted) {
      this.controller.abort(new Error('engine stopped'));
    }
  }

  stepStates(): Record<string, string> {
    const states: Record<string, string> = {};
    for (let i = 0; i < this.n; i++) {
      states[this.steps[i]!.name] = this.outcomes[i]?.status ?? STATE_NAMES[this.state[i]!]!;
    }
    return states;
  }

  /** What an inspector shows: progress, not the closures of the input. */
  toJSON(): unknown {
    return {
      running: this.running,
      finished: this.finished,
      total: this.n,
      steps: this.stepStates(),
    };
  }

  /** Starts ready steps in YAML order while below the concurrency limit. */
  private pump(): void {
    const limit = this.input.maxConcurrency;
    while (this.heapSize > 0 && this.running < limit && !this.aborted) {
      const index = this.pop();
      if (this.state[index] !== PENDING) continue;
      const step = this.steps[index]!;
      if (step.when !== undefined) {
        let go: boolean;
        try {
          go = this.deps.isTruthy(step.when(this.scope));
        } catch (error) {
          this.fail(index, `when: ${messageOf(error)}`, 0, null, this.input.clock.now());
          continue;
        }
        if (!go) {
          this.skip(index, SKIP_CONDITION_FALSE, this.input.clock.now());
          continue;
        }
      }
      let resolved: unknown;
      try {
        resolved = step.inputs(this.scope);
      } catch (error) {
        this.fail(index, `inputs: ${messageOf(error)}`, 0, null, this.input.clock.now());
        continue;
      }
      this.inputs[index] = resolved;
      this.running++;
      this.startTime[index] = this.input.clock.now();
      this.startAttempt(index, 1);
    }
  }

  private startAttempt(index: number, attempt: number): void {
    const step = this.steps[index]!;
    const time = this.input.clock.now();
    this.state[index] = RUNNING;
    this.attempt[index] = attempt;
    this.attemptStart[index] = time;
    const input = this.inputs[index];
    this.actorScope.emit({ type: 'step.started', index, attempt, input, time });
    const self = this.actorScope.self;
    const request: AttemptRequest = {
      step,
      input: (input ?? {}) as Record<string, unknown>,
      scope: this.scope,
      attempt,
      signal: this.controller.signal,
    };
    if (step.loopUntil !== undefined) request.onIteration = this.iterationListener(index, attempt);
    let pending: Promise<AttemptResult>;
    try {
      pending = this.input.runAttempt(request);
    } catch (error) {
      pending = Promise.reject(error instanceof Error ? error : new Error(messageOf(error)));
    }
    // Anonymous inline callbacks: no per-attempt named closures (tsx's keepNames wraps those).
    pending.then(
      (result) => self.send({ type: 'step.result', index, attempt, result }),
      (error: unknown) =>
        self.send({ type: 'step.result', index, attempt, result: thrownResult(error) }),
    );
  }

  private iterationListener(
    index: number,
    attempt: number,
  ): (iteration: number, output: Record<string, unknown> | null) => void {
    return (iteration, output) => {
      if (this.state[index] !== RUNNING || this.attempt[index] !== attempt) return;
      this.actorScope.emit({
        type: 'step.iteration',
        index,
        iteration,
        output,
        time: this.input.clock.now(),
      });
    };
  }

  private complete(index: number, outcome: StepOutcome): void {
    const step = this.steps[index]!;
    const output = outcome.output;
    for (const key in step.outputs) {
      if (!Object.hasOwn(step.outputs, key)) continue;
      this.context[step.outputs[key]!] = output?.[key] ?? null;
    }
    this.finishStep(index, outcome);
    this.release(step);
  }

  private skip(index: number, reason: string, now: number): void {
    this.finishStep(index, skippedOutcome(reason, now));
    this.release(this.steps[index]!);
  }

  private fail(
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
    const started = attempts > 0;
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
      startTime: started ? this.startTime[index]! : null,
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
        if (this.state[d] !== PENDING) continue;
        this.state[d] = FINISHED;
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

  /** When nothing runs and nothing is ready but steps remain, they can never start. */
  private settleIfStuck(): void {
    if (this.running > 0 || this.heapSize > 0 || this.finished === this.n) return;
    const now = this.input.clock.now();
    for (let i = 0; i < this.n; i++) {
      if (this.state[i] === PENDING)
        this.finishStep(i, skippedOutcome(SKIP_UNMET_DEPENDENCIES, now));
    }
  }

  private finishStep(index: number, outcome: StepOutcome): void {
    this.state[index] = FINISHED;
    this.outcomes[index] = outcome;
    this.finished++;
    this.views[this.steps[index]!.name] = { status: outcome.status, outputs: outcome.output };
    this.actorScope.emit({ type: 'step.finished', index, outcome });
  }

  /** A finished (not failed) step releases its dependents. */
  private release(step: CompiledStep): void {
    for (const d of step.dependentsIndex) {
      if (--this.remaining[d]! === 0 && this.state[d] === PENDING) this.push(d);
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
    const heap = this.heap;
    let i = this.heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= value) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = value;
  }

  private pop(): number {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap[--this.heapSize]!;
    let i = 0;
    const size = this.heapSize;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= last) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
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
