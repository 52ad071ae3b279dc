/**
 * The map executor (kind `map`, src/workflow/kinds/map.ts): one attempt of a map step runs its
 * body once per item of its `for_each` list, at most `max_concurrency` items at once, and
 * collects the outputs in item order as `{results: [...], failed: n}`.
 *
 * - Items are started lazily, as slots free up: 10 000 items hold one result slot each and at
 *   most `max_concurrency` running attempts, never 10 000 pending promises.
 * - Each item runs the body through the run's executor table (`runBody`: the body's kind), with
 *   the body's `max_attempts` (else the run's) and the run's backoff between its attempts.
 * - `fail_fast`: the first item whose last attempt fails fails the step (`item <i> failed: …`);
 *   no more items start and the running ones are aborted (their signal, the run's combined
 *   with the map's own). `collect`: every item runs; a failed one is `{error}` in `results` and
 *   the step succeeds.
 * - The run's abort (cancel, run timeout) ends the attempt at once with the abort's reason; the
 *   running items get the same signal.
 * - Outputs are held against the run's byte budget item by item (the body's executor holds each
 *   one), so the collected list is never counted twice.
 *
 * The run learns of items through `onItem` (a live progress object, then each item's end): the
 * session turns that into bounded `step_complete` frames and `GET /api/runs/{id}/explain` counts.
 */
import { errorMessage } from '../../errors.js';
import { addUsage, type TokenUsage } from '../../llm/types.js';
import { describeValue } from '../../workflow/input-types.js';
import { MAP_ITEM_FAILURE, MAP_ITEM_INDEX } from '../../workflow/kinds/map.js';
import type { CompiledStep, EvalScope } from '../../workflow/types.js';
import type { FinishedMapItem, MapItemsSummary } from '../../generated/run-record.js';
import type {
  AttemptResult,
  AttemptRunner,
  EngineClock,
} from '../../../machines/engine-contract.js';

/** Failures a map step's record keeps (`metadata.items.failures`). */
export const MAX_RECORDED_ITEM_FAILURES = 20;

/**
 * A map step sends at most about this many item frames (`step_complete` with `item`): one per
 * item of a list this long or shorter; past it, one every ceil(total / this) finished items and
 * the last. 10 000 items then cost ~100 frames, not 10 000, in the replay buffer and on the wire.
 */
export const MAX_ITEM_FRAMES = 100;

/** Whether the item that just finished (`progress` counts it) gets a frame. */
export function framesItem(progress: Readonly<MapProgress>): boolean {
  const finished = progress.done + progress.failed;
  const stride = Math.ceil(progress.total / MAX_ITEM_FRAMES);
  return stride <= 1 || finished % stride === 0 || finished === progress.total;
}

/** A map step's items while it runs (live: the executor updates it in place). */
export interface MapProgress {
  total: number;
  /** Items that succeeded. */
  done: number;
  failed: number;
  running: number;
}

/** One item that finished. */
export interface MapItemEnd {
  index: number;
  status: 'success' | 'failed';
  attempts: number;
  error: string | null;
  /** Its output (a success). @default none */
  output?: unknown;
}

/** What the run is told of a map step's items. */
export interface MapItemListener {
  /** The attempt began with `progress.total` items; `progress` stays live until it ends. */
  started(step: CompiledStep, progress: Readonly<MapProgress>): void;
  /** Item `end.index` finished (`progress` already counts it). */
  itemEnded(step: CompiledStep, end: MapItemEnd, progress: Readonly<MapProgress>): void;
}

export interface MapExecutorOptions {
  clock: EngineClock;
  /** Attempts per item when the body sets no `max_attempts` (the run's). */
  maxAttempts: number;
  /** Delay before attempt `attempt + 1` of an item (the run's backoff). */
  retryDelayMs: (attempt: number) => number;
  /** Runs one attempt of the body for one item: the run's executor of the body's kind. */
  runBody: AttemptRunner;
  /** @default none */
  listener?: MapItemListener | undefined;
  /**
   * The items of map step `step` that finished before the run was interrupted (a resumed run,
   * docs/durable-runs.md): they keep their outcome and do not run again. @default none
   */
  finishedItems?: ((step: CompiledStep) => readonly FinishedMapItem[] | undefined) | undefined;
}

/** The executor of map steps. Never rejects (the {@link AttemptRunner} contract). */
export function createMapExecutor(options: MapExecutorOptions): AttemptRunner {
  return (request) => {
    const map = request.step.map;
    if (map === undefined) return Promise.resolve(failure('not a map step', 0));
    if (request.aborted ?? request.signal.aborted) {
      return Promise.resolve(failure(errorMessage(request.signal.reason), 0));
    }
    let list: unknown;
    try {
      list = map.forEach(request.scope);
    } catch (error) {
      return Promise.resolve(failure(errorMessage(error), 0));
    }
    if (!Array.isArray(list)) {
      return Promise.resolve(
        failure(`for_each must evaluate to a list, got ${describeValue(list)}`, 0),
      );
    }
    return new MapAttempt(options, request, list).run();
  };
}

function failure(error: string, iterations: number): AttemptResult {
  return { ok: false, output: null, error, modelUsed: null, tokensUsed: null, iterations };
}

/** One attempt of a map step: its items, their slots and results. */
class MapAttempt {
  private readonly body: CompiledStep;
  private readonly as: string;
  private readonly limit: number;
  private readonly collect: boolean;
  private readonly results: unknown[];
  private readonly progress: MapProgress;
  private readonly failures: { index: number; error: string }[] = [];
  private next = 0;
  /** Items restored from a resumed run's record (1: finished before), skipped by `fill`. */
  private skip: Uint8Array | undefined;
  private tokens: TokenUsage | null = null;
  private model: string | null = null;
  private stopped: string | undefined;
  private settle!: (result: AttemptResult) => void;
  private settled = false;
  private onAbort: (() => void) | undefined;
  /** Aborts the running items after a fail_fast failure; made when an item reads its signal. */
  private items: { controller: AbortController; signal: AbortSignal } | undefined;

  constructor(
    private readonly options: MapExecutorOptions,
    private readonly request: Parameters<AttemptRunner>[0],
    private readonly list: readonly unknown[],
  ) {
    const map = request.step.map!;
    this.body = map.body;
    this.as = map.as;
    this.limit = map.maxConcurrency;
    this.collect = map.onItemFailure === MAP_ITEM_FAILURE.COLLECT;
    this.results = new Array<unknown>(list.length).fill(null);
    this.progress = { total: list.length, done: 0, failed: 0, running: 0 };
    const finished = options.finishedItems?.(request.step);
    if (finished !== undefined) this.restore(finished);
  }

  /** Items a resumed run had finished: their outcomes taken as they were, not run again. */
  private restore(finished: readonly FinishedMapItem[]): void {
    const skip = new Uint8Array(this.list.length);
    for (const item of finished) {
      if (item.index >= this.list.length || skip[item.index] === 1) continue;
      skip[item.index] = 1;
      if (item.error === undefined) {
        this.results[item.index] = item.output ?? null;
        this.progress.done++;
        continue;
      }
      this.progress.failed++;
      if (this.failures.length < MAX_RECORDED_ITEM_FAILURES)
        this.failures.push({ index: item.index, error: item.error });
      if (this.collect) this.results[item.index] = { error: item.error };
      else this.stopped ??= `item ${item.index} failed: ${item.error}`;
    }
    this.skip = skip;
  }

  run(): Promise<AttemptResult> {
    const done = new Promise<AttemptResult>((resolve) => (this.settle = resolve));
    this.options.listener?.started(this.request.step, this.progress);
    if (this.list.length > 0) {
      // Only a map with items waits on the run's signal (it makes the signal: one per run).
      const signal = this.request.signal;
      this.onAbort = () => this.finish(failure(errorMessage(signal.reason), 0));
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    this.fill();
    return done;
  }

  /** Starts items until the slots are full or none is left. */
  private fill(): void {
    while (
      this.stopped === undefined &&
      !this.settled &&
      this.progress.running < this.limit &&
      this.next < this.list.length
    ) {
      const index = this.next++;
      if (this.skip?.[index] === 1) continue;
      this.progress.running++;
      this.runItem(index, 1).then(
        (end) => this.itemEnded(end),
        (error: unknown) =>
          this.itemEnded({ index, status: 'failed', attempts: 1, error: errorMessage(error) }),
      );
    }
    if (
      this.progress.running === 0 &&
      (this.stopped !== undefined || this.next >= this.list.length)
    )
      this.finish(this.result());
  }

  private async runItem(index: number, first: number): Promise<MapItemEnd> {
    const scope: EvalScope = {
      inputs: this.request.scope.inputs,
      steps: this.request.scope.steps,
      context: this.request.scope.context,
      item: { [this.as]: this.list[index], [MAP_ITEM_INDEX]: index },
    };
    const max = this.body.maxAttempts ?? this.options.maxAttempts;
    let input: Record<string, unknown>;
    try {
      input = asRecord(this.body.inputs(scope));
    } catch (error) {
      return { index, status: 'failed', attempts: first, error: errorMessage(error) };
    }
    for (let attempt = first; ; attempt++) {
      const result = await this.options.runBody(
        new ItemAttempt(this.body, input, scope, attempt, this, index, this.request.attempt),
      );
      this.tokens = addUsage(this.tokens, result.tokensUsed);
      if (result.modelUsed !== null) this.model = result.modelUsed;
      if (result.ok) {
        this.results[index] = result.output;
        return { index, status: 'success', attempts: attempt, error: null, output: result.output };
      }
      const error = result.error ?? 'failed';
      if (attempt >= max || this.settled || this.stopped !== undefined) {
        return { index, status: 'failed', attempts: attempt, error };
      }
      await this.delay(this.options.retryDelayMs(attempt));
      if (this.settled) return { index, status: 'failed', attempts: attempt, error };
    }
  }

  /** Items with a tool call waiting for approval (their body has `tools:`). */
  private approvalsWaiting = 0;

  /**
   * The attempt's `onApproval` for its items (a body with `tools:`): the map step waits for an
   * approval while any of its items does, so explain and the graph machine say so.
   */
  get itemApproval(): ((waiting: boolean) => void) | undefined {
    const report = this.request.onApproval;
    if (report === undefined) return undefined;
    return (waiting) => {
      const before = this.approvalsWaiting;
      this.approvalsWaiting = Math.max(0, before + (waiting ? 1 : -1));
      if (before > 0 !== this.approvalsWaiting > 0 && !this.settled)
        report(this.approvalsWaiting > 0);
    };
  }

  /** Whether the items are aborted: the run was, or an item failed under fail_fast. */
  get itemsAborted(): boolean {
    return (this.request.aborted ?? this.request.signal.aborted) || this.stopped !== undefined;
  }

  /** The items' signal: the run's, and this map's own abort after a fail_fast failure. */
  itemSignal(): AbortSignal {
    if (this.items === undefined) {
      const controller = new AbortController();
      if (this.stopped !== undefined) controller.abort(new Error(this.stopped));
      this.items = {
        controller,
        signal: AbortSignal.any([this.request.signal, controller.signal]),
      };
    }
    return this.items.signal;
  }

  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => this.options.clock.setTimeout(resolve, ms));
  }

  private itemEnded(end: MapItemEnd): void {
    const progress = this.progress;
    progress.running--;
    if (this.settled) return;
    if (end.status === 'success') {
      progress.done++;
    } else {
      progress.failed++;
      const error = end.error ?? 'failed';
      if (this.failures.length < MAX_RECORDED_ITEM_FAILURES)
        this.failures.push({ index: end.index, error });
      if (this.collect) this.results[end.index] = { error };
      else if (this.stopped === undefined) {
        this.stopped = `item ${end.index} failed: ${error}`;
        this.items?.controller.abort(new Error(this.stopped));
      }
    }
    this.options.listener?.itemEnded(this.request.step, end, progress);
    this.fill();
  }

  private summary(): MapItemsSummary {
    const { total, done, failed } = this.progress;
    const summary: MapItemsSummary = { total, succeeded: done, failed };
    if (this.failures.length > 0)
      summary.failures = this.failures.sort((a, b) => a.index - b.index);
    return summary;
  }

  private result(): AttemptResult {
    const base = {
      modelUsed: this.model,
      tokensUsed: this.tokens,
      iterations: 1,
      items: this.summary(),
    };
    if (this.stopped !== undefined)
      return { ...base, ok: false, output: null, error: this.stopped };
    return {
      ...base,
      ok: true,
      output: { results: this.results, failed: this.progress.failed },
      error: null,
    };
  }

  private finish(result: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    if (this.onAbort !== undefined) this.request.signal.removeEventListener('abort', this.onAbort);
    if (result.items === undefined) result.items = this.summary();
    this.settle(result);
  }
}

/** One attempt of the body for one item; its signal is the map's (made when first read). */
class ItemAttempt {
  readonly item: { index: number; stepAttempt: number };
  constructor(
    readonly step: CompiledStep,
    readonly input: Record<string, unknown>,
    readonly scope: EvalScope,
    readonly attempt: number,
    private readonly map: MapAttempt,
    index: number,
    stepAttempt: number,
  ) {
    this.item = { index, stepAttempt };
  }

  get signal(): AbortSignal {
    return this.map.itemSignal();
  }

  get aborted(): boolean {
    return this.map.itemsAborted;
  }

  get onApproval(): (waiting: boolean) => void {
    return this.map.itemApproval ?? ignoreApproval;
  }
}

/** An item's approval waits when its map step's attempt reports none (a body without tools). */
function ignoreApproval(): void {}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
