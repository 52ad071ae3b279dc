/**
 * A runtime's registry of its runs, kept apart from the assembly as XState's system keeps its
 * actor registry: the active run sessions by id, the ids reserved by starts in flight, the
 * admission checks (the active-run cap, the held-bytes budget), idleness and the shutdown's
 * cancellation.
 */
import { ConflictError, RunsBudgetSpentError, TooManyActiveRunsError } from '../errors.js';
import type { EngineClock } from '../../machines/engine-contract.js';
import { RunHeldBytes, RunsHeldBytes } from './held-bytes.js';
import type { RunSession } from './run-session.js';

/**
 * Seconds a run refused at `maxActiveRuns` is told to wait (Retry-After). When a slot frees
 * is unknown (runs last from milliseconds to hours); 5 s keeps a polling client cheap.
 */
const ACTIVE_RUNS_RETRY_AFTER_SECONDS = 5;

/** Seconds a run refused at `maxRunsHeldBytes` is told to wait (Retry-After), as above. */
const HELD_BYTES_RETRY_AFTER_SECONDS = 5;

/**
 * Runs cancelled between two looks at the shutdown deadline: at ~0.4-2 ms a run, a slice keeps
 * the overshoot past the deadline under about 0.1 s.
 */
const SHUTDOWN_CANCEL_SLICE = 64;

export interface RunRegistryLimits {
  maxActiveRuns: number;
  /** What all active runs may hold of their steps' inputs and outputs (bytes). */
  maxRunsHeldBytes: number;
  /** What one run may hold (bytes). */
  maxRunBytes: number;
}

export class RunRegistry {
  private readonly active = new Map<string, RunSession>();
  private readonly reserved = new Set<string>();
  /** Launches between their admission and their session (loading the workflow, the inputs). */
  private launching = 0;
  private readonly idleWaiters = new Set<() => void>();
  /** What the active runs hold (held-bytes.ts): each session gives its bytes back when released. */
  private readonly held: RunsHeldBytes;

  constructor(
    private readonly limits: RunRegistryLimits,
    private readonly clock: EngineClock,
  ) {
    this.held = new RunsHeldBytes(limits.maxRunsHeldBytes, limits.maxRunBytes);
  }

  get(runId: string): RunSession | undefined {
    return this.active.get(runId);
  }

  has(runId: string): boolean {
    return this.active.has(runId);
  }

  ids(): string[] {
    return [...this.active.keys()];
  }

  /** Throws 409 when a run with this id is active or being started. */
  assertIdle(runId: string): void {
    if (this.active.has(runId) || this.reserved.has(runId)) {
      throw new ConflictError(`run '${runId}' is already active`);
    }
  }

  /**
   * Admits a launch (checked and counted with nothing awaited in between, so concurrent starts
   * cannot overshoot the cap) and reserves its id when given; `launched` ends it.
   */
  admit(runId: string | undefined): void {
    // Runs being started count.
    if (this.active.size + this.launching >= this.limits.maxActiveRuns) {
      throw new TooManyActiveRunsError(this.limits.maxActiveRuns, ACTIVE_RUNS_RETRY_AFTER_SECONDS);
    }
    if (!this.held.admits) {
      throw new RunsBudgetSpentError(
        this.held.total,
        this.held.max,
        HELD_BYTES_RETRY_AFTER_SECONDS,
      );
    }
    if (runId !== undefined) this.reserved.add(runId);
    this.launching++;
  }

  /**
   * Admits the launch of a resumed run: its id reserved, past the active-run cap and the
   * held-bytes budget (the run was accepted before; refusing it now would lose it).
   */
  admitResumed(runId: string): void {
    this.reserved.add(runId);
    this.launching++;
  }

  /** Reserves a generated id (checked first) for a launch already admitted. */
  reserve(runId: string): void {
    this.assertIdle(runId);
    this.reserved.add(runId);
  }

  /** A new run's share of the held-bytes budget. */
  heldBytes(): RunHeldBytes {
    return new RunHeldBytes(this.held, this.limits.maxRunBytes);
  }

  /** The end of an admitted launch: `session` is active, or (undefined) the launch failed. */
  launched(runId: string | undefined, session: RunSession | undefined): void {
    if (session !== undefined) this.active.set(session.runId, session);
    if (runId !== undefined) this.reserved.delete(runId);
    this.launching--;
    this.wakeIfIdle();
  }

  /** A run has ended (or was abandoned): its slot and its held bytes are free. */
  release(session: RunSession): void {
    session.heldBytes.release();
    this.active.delete(session.runId);
    this.reserved.delete(session.runId);
    this.wakeIfIdle();
  }

  /** Resolves true once no run is active or starting, false when `graceMs` passes first. */
  waitIdle(graceMs: number): Promise<boolean> {
    if (this.active.size === 0 && this.launching === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.idleWaiters.delete(wake);
        resolve(false);
      }, graceMs);
      const wake = (): void => {
        this.clock.clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve(true);
      };
      this.idleWaiters.add(wake);
    });
  }

  /**
   * Cancels the active runs, a slice at a time, until `deadline` (clock ms); returns the runs not
   * reached by then. Ending a run (engine stop, end record, workflow_end) costs 0.4-2 ms on a
   * loaded 2-core machine: cancelled in one loop, 40,000 runs kept the process ~25 s past a
   * 10 s grace. Between slices the loop yields, so the writes of the ended runs go on.
   */
  async cancelUntil(deadline: number, reason: string): Promise<RunSession[]> {
    return this.eachUntil([...this.active.values()], deadline, (session) => session.cancel(reason));
  }

  /**
   * Does `action` to `sessions` a slice at a time, yielding to the event loop between slices,
   * until `deadline` (the clock's time); resolves with the sessions not reached.
   */
  async eachUntil(
    sessions: readonly RunSession[],
    deadline: number,
    action: (session: RunSession) => void,
  ): Promise<RunSession[]> {
    let next = 0;
    while (next < sessions.length && this.clock.now() < deadline) {
      const end = Math.min(sessions.length, next + SHUTDOWN_CANCEL_SLICE);
      for (; next < end; next++) action(sessions[next]!);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return sessions.slice(next);
  }

  /** The active runs not already ending (their end record being written). */
  unfinished(): RunSession[] {
    return [...this.active.values()].filter((session) => !session.isEnding);
  }

  /** Resolves once every active run has ended. */
  async allDone(): Promise<void> {
    await Promise.all([...this.active.values()].map((session) => session.done));
  }

  private wakeIfIdle(): void {
    if (this.active.size === 0 && this.launching === 0) {
      for (const wake of [...this.idleWaiters]) wake();
    }
  }
}
