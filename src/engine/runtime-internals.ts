/**
 * What a runtime owns that the HTTP service serving it (and tests) reach, but that is not part of
 * the public `Runtime` type: its workflow registry (one per runtime, so the service's workflow
 * endpoints validate with the runtime's custom agent names and share its compiled workflows) and
 * its run-file write thread. (Its turn slicer is the process's: `processTurnSlicer()`.) Held
 * under a symbol on the runtime object, not in a module-level table.
 */
import type { EngineSeed } from '../../machines/engine-contract.js';
import type { RunRecord } from '../generated/run-record.js';
import type { WriteThread } from '../store/write-thread.js';
import type { ResumeReason } from './run-resumer.js';
import type { ToolKit } from '../tools/index.js';
import type { WorkflowRegistry } from '../workflow/index.js';
import type { RunHandle, RunRequest, Runtime } from './types.js';

const INTERNALS = Symbol('agentic-runtime.internals');

export interface RuntimeInternals {
  /** The runtime's workflow registry. */
  readonly workflows: WorkflowRegistry;
  /** The runtime's run-file write thread (undefined when it does not persist). */
  readonly writeThread: WriteThread | undefined;
  /**
   * `runtime.start(request)` with some steps already finished (see `EngineSeed` in
   * machines/engine-contract.ts): they are not executed, their outcomes go into the new run's
   * events and run file as if they had just run (`step_end`; the journal records them), and
   * their outputs feed the steps that run. A step in `seed.attempts` continues its attempt count.
   */
  readonly startSeeded: (request: RunRequest, seed: EngineSeed) => Promise<RunHandle>;
  /**
   * Resumes a run whose record (its journal folded in) is at hand, through the resume seam
   * (run-resumer.ts `resumeRecord`): a scale-out worker taking over a dead worker's run.
   */
  readonly resumeRecord: (
    filename: string,
    record: RunRecord,
    reason: ResumeReason,
  ) => Promise<RunHandle>;
  /** The runtime's tool kit, made on first use (`GET /api/tools`). */
  readonly tools: () => Promise<ToolKit>;
  /** This runtime's owner id (store/owner.ts); undefined when it does not persist. */
  readonly ownerId: () => Promise<string | undefined>;
}

/** `runtime` with its internals attached, as `createRuntime` returns it. */
export function withInternals<T extends Runtime>(runtime: T, internals: RuntimeInternals): T {
  Object.defineProperty(runtime, INTERNALS, { value: internals, enumerable: false });
  return runtime;
}

/** The internals of a runtime made by `createRuntime`; undefined for anything else (a queued runtime). */
export function internalsOf(runtime: object): RuntimeInternals | undefined {
  return (runtime as Partial<Record<typeof INTERNALS, RuntimeInternals>>)[INTERNALS];
}
