/**
 * Spreads a burst of run begins over event-loop turns, a few milliseconds of them per turn.
 *
 * Why: run starts arrive clumped. The initial run files of every run started meanwhile are
 * written as one batch by the write thread (src/store/write-thread.ts), and the batch's
 * completion resumes all of those runs in the same turn; each then begins its engine, its first
 * steps and their model calls (~0.5 ms of CPU a run). Two hundred runs started at once came back
 * as turns of 15-50 begins, 10-30 ms of work during which no timer, socket or stream chunk of any
 * other run was served. With a slicer the begins of one turn stop once it has spent its budget,
 * and the rest continue on the next turns (after a `setImmediate`, so timers and I/O run between
 * slices). The work and its order are unchanged; a begin waits at most for the slices queued
 * before it.
 */

/** The turn-slicing gate of one runtime. */
export interface TurnSlicer {
  /**
   * Undefined when the caller may go on now (the current slice has budget left and nobody is
   * queued), else a promise that resolves when its turn comes (first come, first served).
   */
  slot(): Promise<void> | undefined;
}

/**
 * A slicer giving each turn `budgetMs` of begins (the piece that crosses the budget still runs
 * whole: pieces are not interrupted). `now` is injectable for tests.
 */
export function createTurnSlicer(
  budgetMs: number,
  now: () => number = () => performance.now(),
): TurnSlicer {
  const waiting: (() => void)[] = [];
  /** When the current slice began; undefined between slices (a new turn starts one). */
  let sliceStart: number | undefined;
  let scheduled = false;

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(nextSlice);
  };

  /** Ends the slice at the end of this turn: the next piece, in a later turn, starts a new one. */
  function nextSlice(): void {
    scheduled = false;
    sliceStart = undefined;
    if (waiting.length > 0) {
      sliceStart = now();
      schedule();
      release();
    }
  }

  /**
   * Lets the next waiter go, then checks the budget again once its synchronous part has run:
   * its continuation is queued before this microtask, so the clock is read after it.
   */
  function release(): void {
    const next = waiting.shift();
    if (next === undefined) return;
    next();
    queueMicrotask(() => {
      if (waiting.length > 0 && sliceStart !== undefined && now() - sliceStart < budgetMs) {
        release();
      }
    });
  }

  return {
    slot() {
      if (waiting.length === 0) {
        if (sliceStart === undefined) {
          sliceStart = now();
          schedule();
          return undefined;
        }
        if (now() - sliceStart < budgetMs) return undefined;
      }
      schedule();
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}
