/**
 * How the runtime runs a compiled graph machine (`graph.machine.ts`): the machine's own actor
 * logic, with the step events applied to the regions they concern.
 *
 * The model (see `graph.machine.ts`): the shared scheduler core decides, the machine is its
 * faithful view: a step region's state is the status the core reports for the step
 * (`stepStatus`), which is what the regions' `always` guards (`ready`, `conditionFalse`,
 * `stepIs`) select in XState's generic path.
 *
 * XState's generic algorithm offers every event to every active region, re-evaluates every
 * region's eventless transitions after it, and rebuilds the state value and the configuration:
 * O(steps) per event (measured ~7 µs per region per event, 1.4 ms per event at 200 steps). Here a
 * step event (`scheduler/step-events.ts`, the vocabulary both engines share) goes to the core's
 * `receive`, as the machine's `running` actions hand it over (`step.settled` is
 * `attemptSucceeded ? completeStep : retryAllowed ? scheduleRetry : failStep`, which is the core's
 * `onResult`); then each region the transition touched (the event's step, and every step an engine
 * event of the transition names) moves to the status the core reports, in O(1) per touched step.
 * `engine.finished` and `engine.abort` (with the `abortRun` and `emitEvents` actions) take the
 * machine from `running` to its final state `completed` / `aborted`, and `xstate.stop` stops it in
 * its state: their snapshot is `machine.resolveState` of the one-word value (no region is walked
 * on the way out; XState's generic exit of 1,000 regions resolves all of them). Every other event
 * takes XState's generic transition. `test/machines/graph.machine.test.ts` checks both paths give
 * the same states.
 *
 * `engine.start` (sent by `start`, as the machine's `requestStart` entry sends it) begins the run
 * the same way.
 *
 * Snapshots are machine snapshots built with XState's public API only, each a new value: no
 * object of one snapshot is changed by a later transition, and nothing writes XState internals.
 * The regions' states live in the run's {@link RegionLog} (`graph-regions.ts`); a snapshot keeps
 * where the log stood and materialises when first read:
 * - `value`: `{ running: { <step>: <state> } }`, a new frozen object per snapshot, built from the
 *   log (O(steps), once per snapshot read);
 * - `_nodes` and `tags` (what XState's own functions read: `can`, `getMeta`, `hasTag`,
 *   `machine.transition`, `getPersistedSnapshot`): those of `machine.resolveState({ value,
 *   context })`, XState's resolution of that state value, once per snapshot read. XState 5's
 *   resolution is quadratic in the regions (`getStateNodes` concatenates each region's nodes to a
 *   growing array): ~10 ms at 1,000 steps. `tags` needs no resolution (no state has tags), and
 *   `toJSON` (what inspectors serialise) reads neither.
 * A snapshot nobody reads costs O(1) (a step event stays O(1)); nothing on the run's path reads
 * `_nodes`. An inspector or subscriber that reads every snapshot's value pays O(steps) per event,
 * as XState's own snapshots would.
 */
import type { Snapshot, StateValue } from 'xstate';
import {
  forEachEngineEvent,
  type EngineEmitted,
  type EngineEvent,
  type EngineInput,
} from './engine-contract.js';
import {
  startRun,
  type GraphContext,
  type GraphMachine,
  type GraphMachineEvent,
} from './graph.machine.js';
import { GraphRun, NO_CHILDREN, type GraphRunDeps } from './graph-run.js';
import { RegionLog, type RegionMark } from './graph-regions.js';
import { isStepEvent, type StepEvent } from './scheduler/step-events.js';
import { STEP_CHILD, STEP_ITEMS, type StepChildEvent, type StepItemsEvent } from './view-events.js';
import { countedItems } from './graph.machine.js';

const ENGINE_START = 'engine.start';
const ENGINE_FINISHED = 'engine.finished';
const ENGINE_ABORT = 'engine.abort';
const XSTATE_STOP = 'xstate.stop';
/** What XState sends a parent when its child actor ended (the id follows). */
const CHILD_DONE = 'xstate.done.actor.';
const CHILD_ERROR = 'xstate.error.actor.';
/** Region states in which a step's invoked child may be listed (it is running). */
const RUNS_CHILD: ReadonlySet<string> = new Set(['running']);

/** A snapshot of the graph machine. */
type GraphSnapshot = Parameters<GraphMachine['transition']>[0];
/** The actor scope XState gives the graph machine's logic. */
type GraphScope = Parameters<GraphMachine['transition']>[2];

/** The actor logic the graph adapter runs: {@link GraphMachine}'s, with the fast step path. */
export interface GraphLogic {
  readonly machine: GraphMachine;
  readonly config: GraphMachine['config'];
  getInitialSnapshot(scope: GraphScope, input: EngineInput): GraphSnapshot;
  transition(snapshot: GraphSnapshot, event: GraphMachineEvent, scope: GraphScope): GraphSnapshot;
  start(snapshot: GraphSnapshot, scope: GraphScope): void;
  getPersistedSnapshot(snapshot: GraphSnapshot): Snapshot<unknown>;
}

/** Immutable empties every running snapshot shares (XState copies these before changing them). */
const NO_HISTORY = Object.freeze({});

/** Whether any state node under `node` has tags (the compiled graph machine has none). */
function anyTags(node: { tags: readonly string[]; states: Record<string, unknown> }): boolean {
  if (node.tags.length > 0) return true;
  return Object.values(node.states).some((child) => anyTags(child as typeof node));
}

/**
 * `snapshot.toJSON()` of a running snapshot: what XState's own `toJSON` returns (the snapshot's
 * members less `machine`, `_nodes` and the methods, `tags` as an array), without reading
 * `_nodes` (which would resolve the configuration: see the header).
 */
function runningJSON(this: GraphSnapshot): Record<string, unknown> {
  return {
    status: this.status,
    output: this.output,
    error: this.error,
    context: this.context,
    value: this.value,
    children: this.children,
    historyValue: this.historyValue,
    tags: Array.from(this.tags),
  };
}

/** Whether a step event carries the fields its type needs (malformed ones are ignored). */
function wellFormed(event: StepEvent): boolean {
  if (typeof event.index !== 'number') return false;
  switch (event.type) {
    case 'step.settled':
      return event.attempt !== undefined && event.result !== undefined;
    case 'step.iteration':
      return event.attempt !== undefined && event.iteration !== undefined;
    case 'step.approval':
      return event.attempt !== undefined;
    case 'step.retry':
      return true;
  }
}

/**
 * The core's pending engine events, emitted after the snapshot is committed (as the machine's
 * `emitEvents` action is); undefined when none are pending.
 */
function emitPending(run: GraphRun, scope: GraphScope): EngineEmitted | undefined {
  if (!run.hasEmitted) return undefined;
  const emitted = run.takeEmitted();
  scope.defer(() => scope.emit(emitted));
  return emitted;
}

/** Builds the runtime logic of `machine` (compiled from `stepNames`, in YAML order). */
export function createGraphLogic(
  machine: GraphMachine,
  stepNames: readonly string[],
  deps: GraphRunDeps,
): GraphLogic {
  // XState's snapshot methods (shared functions reading `this`), from one resolved snapshot.
  const methods = machine.resolveState({ value: 'completed', context: { run: undefined } });
  // No state has tags: a running snapshot's `tags` is empty without resolving its configuration.
  const tagless = !anyTags(machine.root);

  /**
   * The snapshot of the running state at `mark`: `value`, `_nodes` and `tags` materialise on
   * first read (see the header); each snapshot is its own object.
   */
  const runningAt = (
    context: GraphContext,
    log: RegionLog,
    mark: RegionMark,
    status: 'active' | 'stopped' = 'active',
    children: Readonly<Record<string, unknown>> = NO_CHILDREN,
  ): GraphSnapshot => {
    let value: StateValue | undefined;
    let resolved: GraphSnapshot | undefined;
    let tags: Set<string> | undefined;
    const valueOf = () => (value ??= Object.freeze({ running: log.valueAt(mark) }));
    const resolve = () => (resolved ??= machine.resolveState({ value: valueOf(), context }));
    return {
      status,
      output: undefined,
      error: undefined,
      machine,
      context,
      children,
      historyValue: NO_HISTORY,
      get value() {
        return valueOf();
      },
      get _nodes() {
        return resolve()._nodes;
      },
      get tags() {
        return (tags ??= tagless ? new Set<string>() : new Set(resolve().tags));
      },
      matches: methods.matches,
      hasTag: methods.hasTag,
      can: methods.can,
      getMeta: methods.getMeta,
      toJSON: runningJSON,
    } as unknown as GraphSnapshot;
  };

  /**
   * A final snapshot (`completed` or `aborted`, both final: the actor is done), resolved by
   * XState from its state value, with the machine's output (its `output` is the run's).
   */
  const finalAt = (context: GraphContext, value: 'completed' | 'aborted'): GraphSnapshot =>
    machine.resolveState({
      value,
      context,
      output: context.run!.output(),
    });

  /** Moves the region of step `index` to the status the core reports; true if it moved. */
  const follow = (run: GraphRun, log: RegionLog, index: number): boolean =>
    index >= 0 && index < stepNames.length && log.move(index, run.stepStatus(index));

  /** `step.child`: the step's child run joins `children` while the step runs (view-events.ts). */
  const adoptChild = (
    snapshot: GraphSnapshot,
    run: GraphRun,
    log: RegionLog,
    event: StepChildEvent,
  ): GraphSnapshot => {
    const state = log.stateOf(event.index);
    const child = event.child;
    if (state === undefined || !RUNS_CHILD.has(state) || child === undefined) return snapshot;
    run.children = Object.freeze({ ...run.children, [child.id]: child });
    return runningAt(snapshot.context, log, log.mark(), 'active', run.children);
  };

  /** XState's done / error event of a child: it ended, so it leaves `children`. */
  const dropChild = (
    snapshot: GraphSnapshot,
    run: GraphRun,
    log: RegionLog,
    type: string,
  ): GraphSnapshot => {
    const id = type.slice(type.startsWith(CHILD_DONE) ? CHILD_DONE.length : CHILD_ERROR.length);
    if (!(id in run.children)) return snapshot;
    const rest: Record<string, unknown> = { ...run.children };
    delete rest[id];
    run.children = Object.freeze(rest) as GraphRun['children'];
    return runningAt(snapshot.context, log, log.mark(), 'active', run.children);
  };

  /** `step.items`: a map step's counter, in a new context (view-events.ts). */
  const counted = (
    snapshot: GraphSnapshot,
    run: GraphRun,
    log: RegionLog,
    event: StepItemsEvent,
  ): GraphSnapshot => {
    const name = run.stepName(event.index);
    if (name === undefined || event.items === undefined) return snapshot;
    const context: GraphContext = Object.freeze({
      ...snapshot.context,
      items: countedItems(snapshot.context.items, name, event.items),
    });
    return runningAt(context, log, log.mark(), 'active', run.children);
  };

  /**
   * A view event (`view-events.ts`) or a child's end, off the step events' path: the snapshot
   * it makes; undefined for any other event (XState's generic transition takes it).
   */
  const viewed = (
    snapshot: GraphSnapshot,
    run: GraphRun,
    log: RegionLog,
    event: GraphMachineEvent,
  ): GraphSnapshot | undefined => {
    const type = event.type;
    if (type === STEP_CHILD)
      return adoptChild(snapshot, run, log, event as unknown as StepChildEvent);
    if (type === STEP_ITEMS) return counted(snapshot, run, log, event as unknown as StepItemsEvent);
    if (type.startsWith(CHILD_DONE) || type.startsWith(CHILD_ERROR))
      return dropChild(snapshot, run, log, type);
    return undefined;
  };

  return {
    machine,
    config: machine.config,
    getInitialSnapshot(scope, input) {
      const run = startRun(new GraphRun(input, scope.self, deps), scope.self);
      const log = (run.regions = new RegionLog(stepNames, 'pending'));
      const context: GraphContext = Object.freeze({ run });
      return runningAt(context, log, log.mark());
    },
    transition(snapshot, event, scope) {
      const run = snapshot.context.run;
      const log = run?.regions;
      if (run === undefined || log === undefined || snapshot.status !== 'active')
        return machine.transition(snapshot, event, scope);
      let moved = false;
      switch (event.type) {
        case ENGINE_START:
          run.begin();
          break;
        case ENGINE_FINISHED:
          // `running` → `completed` (final): what the machine's transition does, without
          // resolving every region on the way out.
          return finalAt(snapshot.context, 'completed');
        case ENGINE_ABORT:
          // `running` → `aborted` with the `abortRun` and `emitEvents` actions.
          run.abort(event.reason ?? 'aborted');
          emitPending(run, scope);
          return finalAt(snapshot.context, 'aborted');
        case XSTATE_STOP:
          // The same state, stopped. Its children (child runs) are runs of their own: their
          // sessions end them (cancel reaches them through the step's signal), not this stop.
          return runningAt(snapshot.context, log, log.mark(), 'stopped', run.children);
        default:
          if (!isStepEvent(event))
            return viewed(snapshot, run, log, event) ?? machine.transition(snapshot, event, scope);
          if (!wellFormed(event)) return snapshot;
          run.receive(event);
          // An approval wait changes the step's status without an engine event.
          moved = follow(run, log, event.index);
      }
      const emitted = emitPending(run, scope);
      if (emitted !== undefined)
        forEachEngineEvent(emitted, (engineEvent: EngineEvent) => {
          if (follow(run, log, engineEvent.index)) moved = true;
        });
      // No region moved: the state is the same (a loop iteration, a late result).
      return moved
        ? runningAt(snapshot.context, log, log.mark(), 'active', run.children)
        : snapshot;
    },
    // As the machine's `requestStart` entry action does: steps start on the first event.
    start: (snapshot, scope) => {
      machine.start(snapshot);
      scope.self.send({ type: ENGINE_START });
    },
    getPersistedSnapshot: (snapshot) => machine.getPersistedSnapshot(snapshot),
  };
}
