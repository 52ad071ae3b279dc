/**
 * The per-run state of a compiled graph machine: the shared {@link SchedulerCore}
 * (`scheduler/scheduler-core.ts`: join counters, ready heap, outcomes, skips, retries, approval
 * waits, abort — the same code the native scheduler runs, so both adapters produce the same event
 * sequence for the same run), connected to the machine. It lives in the machine's context and is
 * changed only by the machine's actions (see `graph.machine.ts`) or, on the runtime path, by
 * `graph.logic.ts` making the same calls, in O(1) or O(log n) per step event.
 *
 * Engine events collect in the core's outbox, which the machine drains with XState `emit`;
 * attempt results, retry timers, loop iterations and approval waits come back as the step events
 * both engines share (`scheduler/step-events.ts`: `step.settled` / `step.retry` /
 * `step.iteration` / `step.approval`, addressed by `index`); when the last step finishes the run
 * sends the machine `engine.finished`.
 * Pure: imports types only; attempts, timers and truthiness come from the input and deps.
 */
import type { AnyActorRef } from 'xstate';
import type { EngineEmitted, EngineInput } from './engine-contract.js';
import { SchedulerCore, type SchedulerDeps } from './scheduler/scheduler-core.js';
import type { StepEvent } from './scheduler/step-events.js';
import type { RegionLog } from './graph-regions.js';

export { SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './scheduler/scheduler-core.js';
export {
  STEP_APPROVAL,
  STEP_ITERATION,
  STEP_RETRY,
  STEP_SETTLED,
  type StepEvent,
} from './scheduler/step-events.js';

/** No children (every run starts with this object; XState copies it before changing it). */
export const NO_CHILDREN: Readonly<Record<string, AnyActorRef>> = Object.freeze({});

/** What the graph run needs besides its input (truthiness of `when:` values). */
export type GraphRunDeps = SchedulerDeps;

/** Scheduling state of one graph run, connected to its machine. */
export class GraphRun extends SchedulerCore {
  /** Whether `engine.finished` was sent (or is not needed: the run was aborted). */
  private finishSent = false;
  /**
   * The regions' states on the runtime path (`graph.logic.ts` makes it; the generic XState path
   * keeps them in its own snapshots and leaves this unset).
   */
  regions: RegionLog | undefined = undefined;
  /**
   * The invoked children on the runtime path (`graph.logic.ts`): the sub-workflow steps' child
   * run actors by invoke id (`view-events.ts`), a new frozen object per change.
   */
  children: Readonly<Record<string, AnyActorRef>> = NO_CHILDREN;

  constructor(
    input: EngineInput,
    private readonly self: AnyActorRef,
    deps: GraphRunDeps,
  ) {
    super(input, deps);
  }

  /**
   * The pending engine events as one emitted event (see {@link SchedulerCore.takeEmitted}).
   * Called after every step action, so it is also where the machine learns that the last step
   * finished: `engine.finished` is sent once (it takes the machine to `completed` after the
   * current transition).
   */
  override takeEmitted(): EngineEmitted {
    if (this.allFinished && !this.finishSent) {
      this.finishSent = true;
      this.self.send({ type: 'engine.finished' });
    }
    return super.takeEmitted();
  }

  /** `engine.abort`: the machine goes to `aborted` itself; no `engine.finished` follows. */
  override abort(reason: string): void {
    this.finishSent = true;
    super.abort(reason);
  }

  /** The name of step `index` (undefined for an index out of range). */
  stepName(index: number): string | undefined {
    return this.steps[index]?.name;
  }

  /** As an observer of its engine actor: the actor completed (done, or stopped mid-run). */
  complete(): void {
    this.dispose();
  }

  protected send(event: StepEvent): void {
    this.self.send(event);
  }
}
