/**
 * The native engine: a dependency-counting scheduler written as XState v5 actor logic (a custom
 * `ActorLogic` object). It keeps, per step, the number of unfinished dependencies; a step whose
 * count reaches zero enters a ready heap ordered by YAML position, and at most `maxConcurrency`
 * steps run at once. Every per-event operation is O(1) or O(log n) (counters, number arrays, a
 * binary heap): no scan of all steps per event and no copy of per-step arrays.
 *
 * The scheduling state and its rules (skips, retries, approval waits, abort, outcomes) are the
 * shared {@link SchedulerCore} (`scheduler/scheduler-core.ts`, also run by the graph machine): the
 * core decides, this file is the actor around it. The core is mutable and private to the actor (it
 * lives in `snapshot.core`, which nothing outside reads; `transition` updates it in place, O(1) per
 * event, where an immutable copy would be O(steps)); each transition that handled an event returns
 * a new snapshot object (status, output, the core's handle), so no snapshot object is shared
 * between two states. Work starts outside `transition`: the root steps' attempts in `start`
 * (as XState's promise logic starts its promise), later attempts through `actorScope.defer`, which
 * XState runs once the transition's snapshot is committed. What they do comes back as the step
 * events both engines share (`scheduler/step-events.ts`: `step.settled`, `step.retry` from the
 * injected clock, `step.iteration`, `step.approval`), which `transition` hands to the core's
 * `receive`, as the graph machine does. Engine events go to the input's observer and are emitted
 * with `actorScope.emit` (`actor.on('*', ...)`).
 *
 * The snapshot is not restorable (`getPersistedSnapshot` is a progress summary): its input holds
 * the attempt runner and the compiled workflow's evaluators, and its attempts are promises in
 * this process. Runs are recovered from their journals instead (README "Engine design").
 *
 * Pure: imports xstate and types only; truthiness is passed in by the adapter.
 */
import type { ActorLogic, ActorScope, AnyEventObject, Snapshot } from 'xstate';
import type { EngineEmitted, EngineInput, EngineOutput, EngineSystem } from './engine-contract.js';
import { SchedulerCore, type Attempt, type SchedulerDeps } from './scheduler/scheduler-core.js';
import { isStepEvent, type StepEvent } from './scheduler/step-events.js';

export { SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './scheduler/scheduler-core.js';

/**
 * Events the native scheduler handles: `engine.abort` from the run actor; the step events both
 * engines share (`scheduler/step-events.ts`); its own `engine.settle`; XState's `xstate.stop`.
 */
export type NativeSchedulerEvent =
  | { type: 'engine.abort'; reason: string }
  | StepEvent
  | { type: 'engine.settle' }
  | { type: 'xstate.stop' };

/** The scheduler's snapshot: XState status/output plus the private scheduling core. */
export type NativeSchedulerSnapshot = Snapshot<EngineOutput> & { core: NativeRun };

/** Receives any event (it is invoked by a machine); acts on {@link NativeSchedulerEvent}s. */
export type NativeSchedulerLogic = ActorLogic<
  NativeSchedulerSnapshot,
  AnyEventObject,
  EngineInput,
  System,
  EngineEmitted
>;

/** What the native scheduler needs besides its input (truthiness of `when:` values). */
export type NativeSchedulerDeps = SchedulerDeps;

type System = EngineSystem;
type Scope = ActorScope<NativeSchedulerSnapshot, AnyEventObject, System, EngineEmitted>;

/** Creates the native scheduler's actor logic. One logic serves every workflow and run. */
export function createNativeSchedulerLogic(deps: NativeSchedulerDeps): NativeSchedulerLogic {
  return {
    // What an inspector shows for the engine actor (`logic.config`): not a state machine, so a
    // description rather than states.
    config: {
      id: 'native-scheduler',
      description:
        'Native engine: a dependency-counting scheduler (custom actor logic, no states); ready steps start in YAML order up to maxConcurrency. Its snapshot shows each step status under core.steps.',
    },
    getInitialSnapshot(actorScope, input) {
      return {
        status: 'active',
        output: undefined,
        error: undefined,
        core: new NativeRun(input, actorScope, deps),
      };
    },
    start(snapshot) {
      snapshot.core.begin();
      snapshot.core.flush();
      snapshot.core.started = true;
    },
    transition(snapshot, anyEvent) {
      if (snapshot.status !== 'active') return snapshot;
      const event = anyEvent as NativeSchedulerEvent;
      const core = snapshot.core;
      if (isStepEvent(event)) core.receive(event);
      else if (event.type === 'engine.abort') core.abort(event.reason);
      else if (event.type === 'xstate.stop') {
        core.dispose();
        return { ...snapshot, status: 'stopped' };
      } else if (event.type !== 'engine.settle') return snapshot;
      core.flush();
      // A new snapshot per state (XState snapshots are values); the core is the actor's private
      // scheduling state, which nothing outside reads (see the header).
      if (!core.allFinished) return { status: 'active', output: undefined, error: undefined, core };
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

/** The shared scheduling core, connected to the native actor: emits with `actorScope.emit`. */
export class NativeRun extends SchedulerCore {
  /** Set once `start` ran: from then on attempts are launched after the transition. */
  started = false;
  /** Attempts started by the current transition, launched by {@link launchQueued}. */
  private readonly queued: Attempt[] = [];
  private readonly launchQueued: () => void;

  constructor(
    input: EngineInput,
    private readonly actorScope: Scope,
    deps: SchedulerDeps,
  ) {
    super(input, deps);
    // Bound once: one deferred function per run, not per transition.
    this.launchQueued = this.launchAll.bind(this);
  }

  /** In `start` the attempt runs at once; in `transition` it waits for the committed snapshot. */
  protected override launch(request: Attempt): void {
    if (!this.started) this.launchNow(request);
    else if (this.queued.push(request) === 1) this.actorScope.defer(this.launchQueued);
  }

  /** The deferred effect of a transition: calls the runners of the attempts it started. */
  private launchAll(): void {
    const queued = this.queued;
    for (let i = 0; i < queued.length; i++) this.launchNow(queued[i]!);
    queued.length = 0;
  }

  /** Starts the root steps; a run that finished inside `start` settles through a self-event. */
  override begin(): void {
    super.begin();
    // A run can finish inside `start` (every step skipped); a self-event lets `transition`
    // report the done snapshot.
    if (this.allFinished) this.actorScope.self.send({ type: 'engine.settle' });
  }

  /** Hands the transition's engine events to the observers: one `actorScope.emit`. */
  flush(): void {
    if (this.hasEmitted) this.actorScope.emit(this.takeEmitted());
  }

  protected send(event: StepEvent): void {
    this.actorScope.self.send(event);
  }
}
