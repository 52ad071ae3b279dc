import type { AnyActorLogic, AnyActorRef } from 'xstate';
import {
  forEachEngineEvent,
  type EngineEmitted,
  type EngineEvent,
  type EngineInput,
  type EngineLogic,
} from './adapter.js';

/** What one run's engine child runs, and who observes it. */
export interface EngineRoute {
  logic: EngineLogic;
  /** Receives every event the engine emits, attached before the engine starts. */
  onEvent: (event: EngineEvent) => void;
}

/**
 * One engine logic for the whole runtime that forwards to each run's adapter logic. The run
 * machine is provided with it once (`.provide` per run would rebuild the machine's state-node
 * tree for every run: ~185 µs and ~13 KB each). The route is found by the identity of the
 * engine input, then by the engine actor; the observer is attached in `getInitialSnapshot`,
 * before the engine starts, so no emitted event is missed.
 */
export interface EngineDispatch {
  /** The one engine logic the run machine is provided with. */
  logic: EngineLogic;
  /** Registers the engine logic and observer of the run whose engine input is `input`. */
  route(input: EngineInput, route: EngineRoute): void;
}

export function createEngineDispatch(): EngineDispatch {
  const routes = new WeakMap<EngineInput, EngineRoute>();
  const byActor = new WeakMap<AnyActorRef, AnyActorLogic>();
  const bySnapshot = new WeakMap<object, AnyActorLogic>();
  // Machine snapshots carry their machine; only other snapshots are remembered (a WeakMap entry
  // per machine transition would cost an ephemeron per step).
  const remember = (logic: AnyActorLogic, snapshot: unknown): unknown => {
    if (typeof snapshot === 'object' && snapshot !== null && !('machine' in snapshot)) {
      bySnapshot.set(snapshot, logic);
    }
    return snapshot;
  };
  const logicOf = (self: AnyActorRef): AnyActorLogic => {
    const logic = byActor.get(self);
    if (logic === undefined) throw new Error('engine dispatch: unknown engine actor');
    return logic;
  };
  const logic: EngineLogic = {
    config: { name: 'engine' },
    getInitialSnapshot(actorScope, input) {
      const route = routes.get(input);
      if (route === undefined) throw new Error('engine dispatch: no route for this engine input');
      routes.delete(input);
      const target = route.logic as AnyActorLogic;
      byActor.set(actorScope.self, target);
      // Batches (several events of one engine transition) reach the observer one event at a time.
      const onEvent = route.onEvent;
      actorScope.self.on('*', (emitted: EngineEmitted) => forEachEngineEvent(emitted, onEvent));
      return remember(target, target.getInitialSnapshot(actorScope, input));
    },
    start(snapshot, actorScope) {
      logicOf(actorScope.self).start?.(snapshot, actorScope);
    },
    transition(snapshot, event, actorScope) {
      const target = logicOf(actorScope.self);
      const next: unknown = target.transition(snapshot, event, actorScope);
      // Logics that keep their snapshot object between events (the native scheduler) need no
      // new entry: the snapshot is already remembered.
      return next === snapshot ? next : remember(target, next);
    },
    getPersistedSnapshot(snapshot, options) {
      const target =
        (snapshot as { machine?: AnyActorLogic }).machine ?? bySnapshot.get(snapshot as object);
      return target === undefined
        ? (snapshot as never)
        : target.getPersistedSnapshot(snapshot, options);
    },
  };
  return { logic, route: (input, route) => routes.set(input, route) };
}
