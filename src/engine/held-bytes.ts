/**
 * The byte budgets of what runs hold (docs/limits.md): each run's step inputs and outputs, in
 * JSON bytes, are counted as they are kept, per run (`maxRunBytes`, AGENTIC_MAX_RUN_BYTES) and
 * over all active runs of the runtime (`maxRunsHeldBytes`, AGENTIC_MAX_RUNS_HELD_BYTES).
 *
 * Why both: the fault campaign's template amplification (100 steps each echoing a 900 KB
 * rendering) kept every run under the step and template bounds, yet each run held 180 MB once
 * its strings were flattened for its journal, and 39 such runs killed a 256 MB process. A run
 * over its own budget keeps what no longer fits as truncation markers, the same markers and
 * warnings as the step I/O bound (deterministic: the same workflow and inputs are truncated the
 * same way whatever else runs). The runtime's budget is load, not content: a new run is refused
 * (503, Retry-After) once the runs hold more than the budget less one run's room, and a step of
 * an admitted run whose input or output would still take the total over the budget fails with a
 * clear error rather than being silently truncated because of other runs.
 *
 * Accounting is O(1) per step (two counters); measuring a value walks it up to the room left,
 * as the step I/O bound already does.
 */
import { isPlainObject } from '../workflow/values.js';
import { CONTENT_LIMIT_VARIABLES } from '../workflow/limits.js';
import { boundRecord, jsonSize, truncationMarker } from '../workflow/size-bounds.js';

/** Variable of the runtime's budget, for messages. */
export const RUNS_HELD_BYTES_VARIABLE = 'AGENTIC_MAX_RUNS_HELD_BYTES';

/**
 * A marker needs about this much: below it a value is kept whole (truncating it would not save
 * anything), and a run with less room left gets whole-value markers.
 */
const MARKER_BYTES = 512;

/** The runtime's budget: what all its active runs hold. */
export class RunsHeldBytes {
  /** Bytes held by the active runs. */
  total = 0;
  /** Room kept for one more run: new runs are admitted while `total + reserve <= max`. */
  private readonly reserve: number;

  constructor(
    readonly max: number,
    maxRunBytes: number,
  ) {
    this.reserve = Math.min(maxRunBytes, Math.floor(max / 2));
  }

  /** Whether a new run may start (nothing held, or room for one more run's budget). */
  get admits(): boolean {
    return this.total === 0 || this.total + this.reserve <= this.max;
  }
}

/** Thrown by {@link RunHeldBytes.hold} when the runtime's budget is spent (the step fails). */
export class RunsHeldBytesSpent extends Error {
  constructor(held: number, max: number) {
    super(
      `not run: the active runs hold ${held} bytes of step inputs and outputs, the most this service allows (${RUNS_HELD_BYTES_VARIABLE}: ${max}); try again later`,
    );
    this.name = 'RunsHeldBytesSpent';
  }
}

/** One run's budget; {@link release} when the run has ended. */
export class RunHeldBytes {
  /** Bytes this run holds. */
  held = 0;
  private readonly reason: string;

  constructor(
    private readonly runs: RunsHeldBytes,
    private readonly max: number,
  ) {
    this.reason = `the run's step inputs and outputs exceeded ${max} bytes (${CONTENT_LIMIT_VARIABLES.maxRunBytes})`;
  }

  /**
   * `value` as the run keeps it: itself while it fits the run's budget, else a copy whose
   * biggest entries are markers (a whole-value marker when little room is left). Throws
   * {@link RunsHeldBytesSpent} when keeping it would take the runtime over its budget.
   */
  hold<T>(value: T): T {
    if (value === null || value === undefined) return value;
    const room = this.max - this.held;
    const size = jsonSize(value, Math.max(room, MARKER_BYTES));
    // A value no bigger than its marker is kept whole, even past the budget.
    if (size <= room || size <= MARKER_BYTES) {
      this.add(size, true);
      return value;
    }
    // Markers measure the value up to the run's whole budget (their `bytes` is then "at least").
    const kept =
      isPlainObject(value) && room > MARKER_BYTES
        ? boundRecord(value, room, this.reason, this.max)
        : truncationMarker(value, room, this.reason, this.max);
    this.add(jsonSize(kept, this.max), false);
    return kept as T;
  }

  private add(size: number, strict: boolean): void {
    const runs = this.runs;
    // Markers are counted but never refused: they are what is left of a value.
    if (strict && size > MARKER_BYTES && runs.total + size > runs.max) {
      throw new RunsHeldBytesSpent(runs.total, runs.max);
    }
    this.held += size;
    runs.total += size;
  }

  /** The run has ended: what it held is given back to the runtime's budget. */
  release(): void {
    this.runs.total -= this.held;
    this.held = 0;
  }
}
