/**
 * The runtime's side of XState inspection: what `createRuntime({ inspect })` hands to the actor
 * system. The inspector gets XState's own inspection events, unchanged: every engine snapshot is
 * a value (the graph engine's snapshots are never changed by a later transition, see
 * `machines/graph.logic.ts`), so an inspector that reads a snapshot later (`@statelyai/inspect`
 * serialises on an idle callback) still sees the state of its transition.
 */
import type { InspectionEvent, Observer } from 'xstate';

/** An XState inspector: a callback, or an observer such as `createWebSocketInspector().inspect`. */
export type Inspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);
