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
 * before it. Run ends take slots too: their end files are batched the same way, and each end
 * then sends its workflow_end to every subscriber. The service passes its HTTP requests and
 * WebSocket upgrades through the same slicer (src/http/middleware/turn-slice.ts,
 * src/http/ws-hub.ts): a start burst's requests arrive together too, and one budget per turn
 * bounds all of it.
 */

/**
 * Milliseconds of pieces per event-loop turn before the rest wait for the next turn: a fraction
 * of the 20 ms loop-delay target, so the relay of running streams (timers, socket reads) gets
 * turns in between, and several pieces (a run begin ~0.5 ms, a request 0.2-0.3 ms) per slice.
 */
export const TURN_SLICE_MS = 4;

/** A turn-slicing gate. */
export interface TurnSlicer {
  /**
   * Undefined when the caller may go on now (the first piece of a turn), else a promise that
   * resolves when its turn comes (first come, first served).
   */
  slot(): Promise<void> | undefined;
}

/**
 * A slicer giving each turn `budgetMs` of pieces. The first piece of a turn goes at once; the
 * next ones go one at a time, each once everything the previous one queued on the microtask
 * queue has run (a run's begin does most of its work in promise continuations: measuring after
 * its synchronous part alone would let a slice run far past its budget), while the turn's
 * budget lasts; the rest wait for the next turns. Pieces are not interrupted: the one that
 * crosses the budget still runs whole. `now` is injectable for tests.
 */
export function createTurnSlicer(
  budgetMs: number,
  now: () => number = () => performance.now(),
): TurnSlicer {
  // A queue read from `head` rather than with `shift()`: a burst queues thousands of waiters, and
  // shifting a long array each time was ~2 % of a run's CPU at 2,000 concurrent runs.
  let waiting: (() => void)[] = [];
  let head = 0;
  const next = (): (() => void) | undefined => {
    if (head >= waiting.length) return undefined;
    const first = waiting[head++];
    if (head === waiting.length) {
      waiting = [];
      head = 0;
    } else if (head >= 1024 && head * 2 >= waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
    return first;
  };
  /** When the current slice began; undefined between slices (a new turn starts one). */
  let sliceStart: number | undefined;
  let nextTurnScheduled = false;
  let checkQueued = false;

  const scheduleNextTurn = (): void => {
    if (nextTurnScheduled) return;
    nextTurnScheduled = true;
    setImmediate(nextSlice);
  };

  /** Ends the slice at the end of this turn, and lets the first waiter start the next one. */
  function nextSlice(): void {
    nextTurnScheduled = false;
    sliceStart = undefined;
    if (waiting.length > head) {
      sliceStart = now();
      scheduleNextTurn();
      next()?.();
      queueCheck();
    }
  }

  /**
   * Checks the budget once the microtask queue is empty: a tick queued from a microtask runs
   * after every microtask queued so far and those they queue in turn.
   */
  function queueCheck(): void {
    if (checkQueued) return;
    checkQueued = true;
    queueMicrotask(() => process.nextTick(check));
  }

  function check(): void {
    checkQueued = false;
    if (waiting.length === head || sliceStart === undefined) return;
    if (now() - sliceStart >= budgetMs) return; // the next turn's slice takes them
    next()?.();
    queueCheck();
  }

  return {
    slot() {
      if (sliceStart === undefined && waiting.length === head) {
        sliceStart = now();
        scheduleNextTurn();
        return undefined;
      }
      scheduleNextTurn();
      queueCheck();
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}

let processSlicer: TurnSlicer | undefined;

/**
 * The process's slicer: the event loop is the process's, so one budget per turn covers every
 * runtime's run launches, begins and ends, the service's requests and upgrades, and the chunks
 * of the model streams the LLM layer reads (src/llm/http.ts `pace`).
 */
export function processTurnSlicer(): TurnSlicer {
  return (processSlicer ??= createTurnSlicer(TURN_SLICE_MS));
}
