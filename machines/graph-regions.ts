/**
 * The step regions' states of one graph run on the runtime path (`graph.logic.ts`), kept so that
 * every snapshot has its own state value without an O(steps) copy per event.
 *
 * The regions' current states are private to the run (an array nothing outside reads). Each move
 * is also appended to a log; a snapshot keeps a {@link RegionMark} (the log segment and its length
 * at that transition), never the array, and builds its value from the mark when first read: the
 * segment's base (the states when the segment began) with the segment's first `length` moves
 * applied. Segments are append-only, so a mark always reads the same value, however far the run
 * has moved on. Costs:
 * - a move: O(1) amortised. A segment holds at most `max(64, 2 × steps)` moves; then a new one
 *   begins with a copy of the current states (O(steps) once per 2 × steps moves);
 * - a snapshot: O(1) to make (it holds the mark); O(steps) when its value is first read (the
 *   base copied, at most 2 × steps moves replayed, an object of `steps` keys built and frozen);
 * - memory: the current segment, O(steps); older segments are freed once no snapshot holds them
 *   (the actor keeps only its latest snapshot).
 *
 * Pure: no imports.
 */

/** A run of moves from a base: append-only. */
class RegionSegment {
  /** Step index of each move, in order. */
  readonly steps: number[] = [];
  /** The state each move went to. */
  readonly states: string[] = [];

  constructor(readonly base: readonly string[]) {}
}

/** Where the log stood at one transition: what a snapshot keeps to build its value. */
export interface RegionMark {
  readonly segment: RegionSegment;
  readonly length: number;
}

/** The regions of one run: current states, and the log snapshots read their values from. */
export class RegionLog {
  private readonly now: string[];
  private segment: RegionSegment;
  private readonly limit: number;

  constructor(
    /** The regions' keys (step names), in YAML order: the state value's key order. */
    private readonly names: readonly string[],
    initial: string,
  ) {
    this.now = new Array<string>(names.length).fill(initial);
    this.segment = new RegionSegment(Object.freeze([...this.now]));
    this.limit = Math.max(64, 2 * names.length);
  }

  /** Region `index`'s state now. */
  stateOf(index: number): string | undefined {
    return this.now[index];
  }

  /** Moves region `index` to `state`; false if it is there already. */
  move(index: number, state: string): boolean {
    if (this.now[index] === state) return false;
    this.now[index] = state;
    const segment = this.segment;
    // A full segment: the next begins from the states now (this move included).
    if (segment.steps.length >= this.limit)
      this.segment = new RegionSegment(Object.freeze([...this.now]));
    else {
      segment.steps.push(index);
      segment.states.push(state);
    }
    return true;
  }

  /** Where the log stands now. */
  mark(): RegionMark {
    return { segment: this.segment, length: this.segment.steps.length };
  }

  /** The regions at `mark`, as a new frozen object keyed by step name in YAML order. */
  valueAt(mark: RegionMark): Readonly<Record<string, string>> {
    const { segment, length } = mark;
    const states = segment.base.slice();
    const steps = segment.steps;
    const to = segment.states;
    for (let i = 0; i < length; i++) states[steps[i]!] = to[i]!;
    const names = this.names;
    const regions: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) regions[names[i]!] = states[i]!;
    return Object.freeze(regions);
  }
}
