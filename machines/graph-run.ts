/**
 * The per-run state of a compiled graph machine: the shared {@link SchedulerCore}
 * (`scheduler/scheduler-core.ts`: join counters, ready heap, outcomes, skips, retries, abort — the same code
 * the native scheduler runs, so both adapters produce the same event sequence for the same run),
 * connected to the machine. It lives in the machine's context and is changed only by the
 * machine's actions (see `graph.machine.ts`), in O(1) or O(log n) per step event.
 *
 * Engine events collect in the core's outbox, which the machine drains with XState `emit`;
 * attempt results, retry timers and loop iterations come back as `step.settled` / `step.retry` /
 * `step.iteration` events carrying the step's index; when the last step finishes the run sends
 * the machine `engine.finished`.
 * Pure: imports types only; attempts, timers and truthiness come from the input and deps.
 */
import type { AnyActorRef } from 'xstate';
import type { AttemptResult, EngineEmitted, EngineInput } from './engine-contract.js';
import {
  SchedulerCore,
  type SchedulerDeps,
  type StepRegionState,
} from './scheduler/scheduler-core.js';

export { SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './scheduler/scheduler-core.js';

/** What the graph run needs besides its input (truthiness of `when:` values). */
export type GraphRunDeps = SchedulerDeps;

/**
 * The step events the run sends its machine: three types for every workflow, addressed to a step
 * by `step` (its index). Few event types keep XState's per-(state node, event type) work and
 * caches independent of the workflow's width.
 */
export const STEP_SETTLED = 'step.settled';
export const STEP_RETRY = 'step.retry';
export const STEP_ITERATION = 'step.iteration';
/**
 * A tool call of the step's attempt started (`waiting: true`) or stopped waiting for approval;
 * for a human step, its question started or stopped waiting for an answer.
 */
export const STEP_APPROVAL = 'step.approval';

/** Scheduling state of one graph run, connected to its machine. */
export class GraphRun extends SchedulerCore {
  /** Whether `engine.finished` was sent (or is not needed: the run was aborted). */
  private finishSent = false;
  /** Steps whose running attempt has a tool call waiting for approval (made on first use). */
  private awaiting: Set<number> | undefined;

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

  /**
   * `step.approval`: attempt `attempt` of step `index` started or stopped waiting for the
   * approval gate (ignored once that attempt is no longer the running one).
   */
  approval(index: number, attempt: number, waiting: boolean): void {
    if (waiting && this.isCurrent(index, attempt)) (this.awaiting ??= new Set()).add(index);
    else this.awaiting?.delete(index);
  }

  /**
   * As the core's, with `awaiting_approval` for a running step whose tool call waits, and
   * `awaiting_input` for a running human step whose question waits.
   */
  override stepStatus(index: number): StepRegionState {
    const status = super.stepStatus(index);
    if (status !== 'running' || this.awaiting?.has(index) !== true) return status;
    return this.input.workflow.steps[index]?.kind === 'human'
      ? 'awaiting_input'
      : 'awaiting_approval';
  }

  /** As an observer of its engine actor: the actor completed (done, or stopped mid-run). */
  complete(): void {
    this.dispose();
  }

  protected sendSettled(index: number, attempt: number, result: AttemptResult): void {
    this.self.send({ type: STEP_SETTLED, step: index, attempt, result });
  }

  protected sendRetry(index: number): void {
    this.self.send({ type: STEP_RETRY, step: index });
  }

  protected iterationListener(
    index: number,
    attempt: number,
  ): (iteration: number, output: Record<string, unknown> | null) => void {
    const self = this.self;
    return (iteration, output) =>
      self.send({ type: STEP_ITERATION, step: index, attempt, iteration, output });
  }

  protected override approvalListener(index: number, attempt: number): (waiting: boolean) => void {
    const self = this.self;
    return (waiting) => self.send({ type: STEP_APPROVAL, step: index, attempt, waiting });
  }
}
