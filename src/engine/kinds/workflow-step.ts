/**
 * The executor of sub-workflow steps (kind `workflow`, docs/workflow-format.md "Sub-workflow
 * steps"): each attempt is a child run of the child workflow, started through the runtime (its
 * own run id, run file and run actor, the actor the invoked child of the step's running state:
 * a child of the parent run's engine actor, docs/engine.md "Kinds in the machine"), with the step's
 * rendered inputs as its inputs. The attempt ends with the child: its `final_output` is the
 * step's output; a failed child fails the attempt with the child's error and run id. The run's
 * abort (cancel, run timeout) and the step's `timeout_seconds` cancel the child, which ends
 * failed with that reason.
 */
import { errorMessage } from '../../errors.js';
import type { RunRecord } from '../../generated/run-record.js';
import { boundRecord } from '../../workflow/size-bounds.js';
import type { CompiledStep } from '../../workflow/types.js';
import { isPlainObject } from '../../workflow/values.js';
import type {
  AttemptResult,
  AttemptRunner,
  EngineClock,
} from '../../../machines/engine-contract.js';

/** A child run as its step sees it. */
export interface ChildRun {
  runId: string;
  /** The child's end record (resolves when its end file is written; never rejects). */
  done: Promise<RunRecord>;
  /** Cancels the child (it ends failed with `reason`). */
  cancel(reason: string): void;
}

/** What the runtime does for a sub-workflow step's attempt. */
export type StartChildRun = (request: {
  step: CompiledStep;
  input: Record<string, unknown>;
  attempt: number;
  /** A map step's item (its body is this sub-workflow): index and the map step's attempt. */
  item?: { index: number; stepAttempt: number } | undefined;
}) => Promise<ChildRun>;

export interface WorkflowStepOptions {
  clock: EngineClock;
  /** Starts (or, for a resumed parent, finds or resumes) the attempt's child run. */
  startChild: StartChildRun;
  /** Largest step output (docs/limits.md). */
  maxOutputBytes: number;
  /** What the run keeps of the output (its byte budget); a throw fails the attempt. */
  holdOutput?: (output: Record<string, unknown>) => Record<string, unknown>;
}

function failure(error: string): AttemptResult {
  return { ok: false, output: null, error, modelUsed: null, tokensUsed: null, iterations: 1 };
}

/** The attempt runner of sub-workflow steps; like every executor it never rejects. */
export function createWorkflowStepExecutor(options: WorkflowStepOptions): AttemptRunner {
  return async (request) => {
    const { step, signal } = request;
    const name = step.workflowCall?.workflow ?? step.agent;
    if (request.aborted ?? signal.aborted) return failure(errorMessage(signal.reason));
    let child: ChildRun;
    try {
      child = await options.startChild({
        step,
        input: request.input,
        attempt: request.attempt,
        item: request.item,
      });
    } catch (error) {
      return failure(`workflow '${name}' did not start: ${errorMessage(error)}`);
    }
    const cancel = (): void => child.cancel(errorMessage(signal.reason));
    signal.addEventListener('abort', cancel, { once: true });
    if (signal.aborted) cancel();
    const seconds = step.timeoutSeconds;
    const timer =
      seconds === undefined
        ? undefined
        : options.clock.setTimeout(
            () => child.cancel(`step timed out after ${seconds}s`),
            seconds * 1000,
          );
    let record: RunRecord;
    try {
      record = await child.done;
    } finally {
      signal.removeEventListener('abort', cancel);
      if (timer !== undefined) options.clock.clearTimeout(timer);
    }
    if (record.status !== 'success') {
      return failure(
        `workflow '${name}' failed (run ${child.runId}): ${record.error ?? record.status}`,
      );
    }
    const final = isPlainObject(record.final_output) ? record.final_output : {};
    let output = boundRecord(final, options.maxOutputBytes);
    try {
      if (options.holdOutput !== undefined) output = options.holdOutput(output);
    } catch (error) {
      return failure(errorMessage(error));
    }
    return { ok: true, output, error: null, modelUsed: null, tokensUsed: null, iterations: 1 };
  };
}
