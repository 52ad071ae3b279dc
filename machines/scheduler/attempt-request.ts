/**
 * The request the scheduler hands to the attempt runner for one attempt of one step. Its `signal`
 * is the run's, made only when first read (see {@link RunAbort}).
 */
import type { AttemptRunner } from '../engine-contract.js';
import type { CompiledStep, EvalScope } from '../../src/workflow/types.js';
import type { RunAbort } from './run-abort.js';

/** The request handed to the attempt runner. */
export type AttemptRequest = Parameters<AttemptRunner>[0];

/** The request of one attempt; its `signal` is the run's, made when first read. */
export class Attempt implements AttemptRequest {
  readonly #runAbort: RunAbort;
  declare onIteration?: (iteration: number, output: Record<string, unknown> | null) => void;
  declare onApproval?: (waiting: boolean) => void;

  constructor(
    readonly step: CompiledStep,
    readonly input: Record<string, unknown>,
    readonly scope: EvalScope,
    readonly attempt: number,
    runAbort: RunAbort,
    readonly startedAt: number,
  ) {
    this.#runAbort = runAbort;
  }

  get signal(): AbortSignal {
    return this.#runAbort.signal;
  }

  get aborted(): boolean {
    return this.#runAbort.aborted;
  }
}
