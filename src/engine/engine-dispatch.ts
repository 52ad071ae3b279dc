import type { AnyActorLogic, AnyActorRef } from 'xstate';
import {
  forEachEngineEvent,
  type EngineEvent,
  type EngineInput,
  type EngineLogic,
  type EngineSnapshot,
} from '../../machines/engine-contract.js';

/** What one run's engine child runs, and who observes it. */
export interface EngineRoute {
  logic: EngineLogic;
  /** Receives every event the engine emits, before any `engineActor.on(...)` listener. */
  onEvent: (event: EngineEvent) => void;
}

/**
 * One engine logic for the whole runtime that forwards to each run's adapter logic. The run
 * machine is provided with it once (`.provide` per run would rebuild the machine's state-node
 * tree for every run: ~185 µs and ~13 KB each). The route is found by the identity of the
 * engine input, then by the engine actor.
 *
 * The run's observer is not an `actor.on('*')` listener: XState copies an actor's listeners into
 * a new array for every emitted event (~0.25 KB each, two events per step). The adapter logic is
 * given an actor scope whose `emit` hands the event to the observer first, then to XState's
 * `emit` (which returns at once when nobody else listens). Listeners attached with
 * `engineActor.on(...)` still see every event, after the observer, as they did before.
 */
export interface EngineDispatch {
  /** The one engine logic the run machine is provided with. */
  logic: EngineLogic;
  /** Registers the engine logic and observer of the run whose engine input is `input`. */
  route(input: EngineInput, route: EngineRoute): void;
}

/** The actor scope XState gives the engine logic. */
type EngineScope = Parameters<EngineLogic['getInitialSnapshot']>[0];
/** The same scope as `start` is typed to take it. */
type EngineStartScope = Parameters<NonNullable<EngineLogic['start']>>[1];

/** An engine actor's adapter logic and the actor scope it is given. */
interface Routed {
  readonly logic: EngineLogic;
  readonly scope: EngineScope;
}

export function createEngineDispatch(): EngineDispatch {
  const routes = new WeakMap<EngineInput, EngineRoute>();
  const byActor = new WeakMap<AnyActorRef, Routed>();
  const bySnapshot = new WeakMap<object, AnyActorLogic>();
  // The actor of the last event and its entry: a run's events mostly come one after another.
  let lastActor: AnyActorRef | undefined;
  let lastRouted: Routed | undefined;
  // Machine snapshots carry their machine; only other snapshots are remembered (a WeakMap entry
  // per machine transition would cost an ephemeron per step).
  const remember = (logic: AnyActorLogic, snapshot: EngineSnapshot): EngineSnapshot => {
    if (!('machine' in snapshot)) {
      bySnapshot.set(snapshot, logic);
    }
    return snapshot;
  };
  const routedOf = (self: AnyActorRef): Routed => {
    if (self === lastActor) return lastRouted!;
    const routed = byActor.get(self);
    if (routed === undefined) throw new Error('engine dispatch: unknown engine actor');
    lastActor = self;
    lastRouted = routed;
    return routed;
  };
  const logic: EngineLogic = {
    config: { name: 'engine' },
    getInitialSnapshot(actorScope, input) {
      const route = routes.get(input);
      if (route === undefined) throw new Error('engine dispatch: no route for this engine input');
      routes.delete(input);
      const target = route.logic;
      const routed: Routed = { logic: target, scope: observedScope(actorScope, route.onEvent) };
      byActor.set(actorScope.self, routed);
      return remember(target, target.getInitialSnapshot(routed.scope, input));
    },
    start(snapshot, actorScope) {
      const routed = routedOf(actorScope.self);
      routed.logic.start?.(snapshot, routed.scope as EngineStartScope);
    },
    transition(snapshot, event, actorScope) {
      const routed = routedOf(actorScope.self);
      const next = routed.logic.transition(snapshot, event, routed.scope);
      // A finished engine is not kept alive by the one-entry cache.
      if (next.status !== 'active' && lastActor === actorScope.self)
        lastActor = lastRouted = undefined;
      // Logics that keep their snapshot object between events (the native scheduler) need no
      // new entry: the snapshot is already remembered.
      return next === snapshot ? next : remember(routed.logic, next);
    },
    getPersistedSnapshot(snapshot, options) {
      const target = (snapshot as { machine?: AnyActorLogic }).machine ?? bySnapshot.get(snapshot);
      return target === undefined ? snapshot : target.getPersistedSnapshot(snapshot, options);
    },
  };
  return { logic, route: (input, route) => routes.set(input, route) };
}

/**
 * A copy of XState's actor scope (its members are fixed when the actor is made) whose `emit`
 * gives each engine event to `onEvent` (batches one event at a time), then to XState's `emit`.
 * Like an XState listener, an observer that throws does not disturb the engine: the error is
 * reported as uncaught, as XState reports a throwing listener.
 */
function observedScope(
  actorScope: EngineScope,
  onEvent: (event: EngineEvent) => void,
): EngineScope {
  const xstateEmit = actorScope.emit;
  return {
    ...actorScope,
    emit(emitted) {
      try {
        forEachEngineEvent(emitted, onEvent);
      } catch (error) {
        reportUncaught(error);
      }
      xstateEmit(emitted);
    },
  };
}

function reportUncaught(error: unknown): void {
  setTimeout(() => {
    throw error;
  });
}
