/**
 * The per-run observer seam: something that follows one run's engine events and its end
 * without being an event subscriber (tracing: a span per run and per step attempt). The
 * runtime makes one per run only when it was given a factory, so a runtime without one pays
 * a single `undefined` check per engine event.
 */
import type { Context } from '@opentelemetry/api';
import type { RunStatus } from '../generated/events.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import type { EngineEvent } from '../../machines/engine-contract.js';

/** Follows one run. */
export interface RunObserver {
  /** Each engine event of the run, in order, as the engine emits it. */
  engineEvent(event: EngineEvent): void;
  /** The run's end, once: when its `workflow_end` goes out, or when it could not start. */
  ended(end: { status: RunStatus; error: string | null }): void;
}

/** What a run observer is made from. */
export interface ObservedRun {
  runId: string;
  workflow: CompiledWorkflow;
  adapter: string;
  /** `performance.now()` when the run was accepted (before its workflow was loaded). */
  acceptedAt: number;
  /** The trace context of whoever started the run (an HTTP request's span). */
  parent: Context | undefined;
}

/** Makes the observer of each run. */
export type RunObserverFactory = (run: ObservedRun) => RunObserver;
