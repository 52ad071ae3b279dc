/**
 * Rerun from a step (a fork, docs/rerun.md): a new run of a finished run's workflow that starts
 * seeded (`EngineSeed`) with the source run's recorded outcomes of the steps upstream of the
 * chosen step, so those are not executed again, and executes that step and everything
 * downstream of it.
 *
 * "Upstream" is every step that is not downstream: the step's transitive dependencies and the
 * steps of other branches alike, since none of them can read the step's outputs. Of those, a
 * step is reused only when its recorded outcome can stand in for running it: a success whose
 * recorded output was not truncated, or a skip by its own false `when:`, with every dependency
 * reused too. A failure, a skip caused by a failure or a cancellation, or a step the source never
 * finished runs again (and so do its dependents): a fork never inherits a failure it was not
 * asked to keep.
 */
import { ConflictError, ERROR_CODES, NotFoundError, ValidationError } from '../errors.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import type { TokenUsage } from '../llm/types.js';
import { usageFromRecord } from '../llm/usage-record.js';
import { findRunRecord } from '../store/run-files.js';
import { STEP_STATUS, type CompiledWorkflow } from '../workflow/types.js';
import { isTruncationMarker } from '../workflow/size-bounds.js';
import type { EngineSeed, StepOutcome } from '../../machines/engine-contract.js';
import { RUN_ID_RE } from './run-id.js';
import type { RerunRequest, RunHandle, RunRequest } from './types.js';

/** The skip reason of a step whose own `when:` was false (the only skip a fork reuses). */
const CONDITION_FALSE = 'condition false';

/** What checking a rerun needs (the runtime's, or an api instance's with runs on workers). */
export interface ForkCheckDeps {
  runsDir: string;
  /** Whether the source run is active (here, or anywhere in the deployment). */
  isActive(runId: string): boolean;
  /** The workflow a source run ran (by its name, as it is now in the workflows directory). */
  loadWorkflow(name: string): Promise<CompiledWorkflow>;
}

export interface RerunDeps extends ForkCheckDeps {
  /** Starts the fork (the runtime's `startSeeded`). */
  launch(request: RunRequest, seed: EngineSeed): Promise<RunHandle>;
}

/** A checked rerun: the fork's run request and its seed (see {@link prepareFork}). */
export interface PreparedFork {
  source: RunRecord;
  workflow: CompiledWorkflow;
  /**
   * The fork as a run request: the source's workflow (by name), its inputs with the new ones
   * laid over them, its adapter unless the request names one, and `extra.forked_from`. The
   * inputs are not validated yet (the runtime does it when it starts the run).
   */
  request: RunRequest & { workflow: string; input: Record<string, unknown> };
  seed: EngineSeed;
}

/**
 * Checks a rerun of `sourceRunId` and makes the fork's request and seed, without starting
 * anything: what `runtime.rerun` does before it launches, and an api instance before it queues
 * the fork to a worker (src/scale/queued-runtime.ts).
 * @throws NotFoundError no such run; ConflictError the source is still running, its workflow is
 * gone or no longer has the step; ValidationError the source has no such step (`loc`
 * `["fromStep"]`)
 */
export async function prepareFork(
  deps: ForkCheckDeps,
  sourceRunId: string,
  request: RerunRequest,
): Promise<PreparedFork> {
  if (!RUN_ID_RE.test(sourceRunId)) {
    throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
  }
  if (deps.isActive(sourceRunId)) throw stillRunning(sourceRunId);
  const source = request.source ?? (await findRunRecord(deps.runsDir, sourceRunId));
  if (source === undefined) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
  if (source.status !== 'success' && source.status !== 'failed') {
    throw stillRunning(sourceRunId);
  }
  const { fromStep } = request;
  if (!source.steps.some((step) => step.step_name === fromStep)) {
    const msg = `run ${sourceRunId} has no step ${JSON.stringify(fromStep)}`;
    throw new ValidationError(msg, [{ loc: ['fromStep'], msg, type: 'value_error.unknown_step' }]);
  }
  const workflow = await sourceWorkflow(deps, source);
  const seed = forkSeed(source, workflow, fromStep);
  const { fromStep: _from, inputs, source: _source, ...settings } = request;
  return {
    source,
    workflow,
    seed,
    request: {
      ...settings,
      workflow: source.workflow_name,
      input: { ...declaredInputs(workflow, source.inputs), ...inputs },
      adapter: request.adapter ?? source.adapter,
      inputLocPrefix: request.inputLocPrefix ?? ['inputs'],
      extra: { forked_from: { run_id: source.run_id, step: fromStep } },
    },
  };
}

/** `runtime.rerun`: see {@link RerunRequest} and docs/rerun.md. */
export function createRerun(deps: RerunDeps) {
  return async function rerun(sourceRunId: string, request: RerunRequest): Promise<RunHandle> {
    const fork = await prepareFork(deps, sourceRunId, request);
    return deps.launch(fork.request, fork.seed);
  };
}

function stillRunning(runId: string): ConflictError {
  return new ConflictError(`run ${runId} is still running; rerun it once it has ended`);
}

/**
 * The source run's workflow as the workflows directory has it now (runs do not pin theirs yet):
 * a 409 when it is gone, no longer loads, or no longer has the step (checked by the caller).
 */
async function sourceWorkflow(deps: ForkCheckDeps, source: RunRecord): Promise<CompiledWorkflow> {
  const name = source.workflow_name;
  try {
    return await deps.loadWorkflow(name);
  } catch (error) {
    if (error instanceof NotFoundError && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
      throw new ConflictError(
        `the workflow ${name} of run ${source.run_id} is no longer in the workflows directory; a rerun needs it`,
      );
    }
    if (error instanceof ValidationError) {
      throw new ConflictError(
        `the workflow ${name} of run ${source.run_id} no longer loads: ${error.message}`,
      );
    }
    throw error;
  }
}

/**
 * The seed of a fork of `source` from `fromStep`: the reusable outcomes of the steps not
 * downstream of it (see the module comment).
 * @throws ConflictError when the workflow no longer has `fromStep`
 */
export function forkSeed(
  source: RunRecord,
  workflow: CompiledWorkflow,
  fromStep: string,
): EngineSeed {
  const from = workflow.stepIndex.get(fromStep);
  if (from === undefined) {
    throw new ConflictError(
      `step ${JSON.stringify(fromStep)} is no longer in workflow ${workflow.name} (it changed since run ${source.run_id})`,
    );
  }
  const downstream = new Set<number>([from]);
  const queue = [from];
  while (queue.length > 0) {
    for (const d of workflow.steps[queue.pop()!]!.dependentsIndex) {
      if (downstream.has(d)) continue;
      downstream.add(d);
      queue.push(d);
    }
  }
  const recorded = new Map(source.steps.map((step) => [step.step_name, step]));
  // A step is reused only with all its dependencies reused: one that runs again may end
  // otherwise than in the source, and a dependent kept from the source would not follow it.
  const reused = new Set<number>();
  for (const index of dependencyOrder(workflow)) {
    const step = workflow.steps[index]!;
    if (downstream.has(index) || !step.dependsOnIndex.every((dep) => reused.has(dep))) continue;
    const record = recorded.get(step.name);
    if (record !== undefined && reusable(record)) reused.add(index);
  }
  const steps = new Map<string, StepOutcome>();
  for (const step of workflow.steps) {
    if (reused.has(step.index)) {
      steps.set(step.name, reusedOutcome(recorded.get(step.name)!, source));
    }
  }
  return { steps };
}

/** The workflow's step indexes, each after its dependencies (the workflow has no cycle). */
function dependencyOrder(workflow: CompiledWorkflow): number[] {
  const remaining = workflow.steps.map((step) => step.dependsOnIndex.length);
  const order = workflow.steps.filter((step) => remaining[step.index] === 0).map((s) => s.index);
  for (let i = 0; i < order.length; i++) {
    for (const d of workflow.steps[order[i]!]!.dependentsIndex) {
      if (--remaining[d]! === 0) order.push(d);
    }
  }
  return order;
}

function reusable(record: StepRecord): boolean {
  if (record.status === STEP_STATUS.SKIPPED) return record.metadata.skip_reason === CONDITION_FALSE;
  if (record.status !== STEP_STATUS.SUCCESS) return false;
  const { output } = record;
  return (
    typeof output === 'object' && output !== null && !Array.isArray(output) && !truncated(output)
  );
}

/** Whether a recorded value holds a truncation marker (the record was cut to its bounds). */
function truncated(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item !== 'object' || item === null) continue;
    if (isTruncationMarker(item)) return true;
    for (const child of Array.isArray(item) ? (item as unknown[]) : Object.values(item)) {
      stack.push(child);
    }
  }
  return false;
}

/** A recorded step as the engine's outcome: what the source did, nothing spent by the fork. */
function reusedOutcome(record: StepRecord, source: RunRecord): StepOutcome {
  const skipped = record.status === STEP_STATUS.SKIPPED;
  const endTime = Date.parse(record.end_time ?? source.end_time ?? source.start_time);
  return {
    status: skipped ? 'skipped' : 'success',
    input: record.input,
    output: skipped ? null : (record.output as Record<string, unknown>),
    error: null,
    skipReason: record.metadata.skip_reason ?? null,
    modelUsed: record.model_used,
    tokensUsed: null,
    attempts: record.metadata.attempts ?? (skipped ? 0 : record.retry_count + 1),
    iterations: record.metadata.iterations ?? (skipped ? 0 : 1),
    startTime: record.start_time === null ? null : Date.parse(record.start_time),
    endTime,
    ...(record.verification === undefined ? {} : { verification: record.verification }),
    ...(record.messages === undefined ? {} : { messages: record.messages }),
    ...(record.metadata.items === undefined ? {} : { items: record.metadata.items }),
    reusedFrom: { runId: source.run_id, tokensUsed: usageOf(record.tokens_used, record.cost_usd) },
  };
}

/** A recorded step's tokens and cost; run files of earlier versions hold a bare total. */
function usageOf(recorded: unknown, costUsd: unknown): TokenUsage | null {
  if (typeof recorded === 'number') return { input: 0, output: 0, total: recorded, costUsd: null };
  return usageFromRecord(recorded, costUsd);
}

/**
 * The source run's inputs the workflow still declares (all of them when it declares none): an
 * input removed from the workflow since would make the fork's inputs invalid.
 */
function declaredInputs(
  workflow: CompiledWorkflow,
  inputs: Record<string, unknown>,
): Record<string, unknown> {
  const declared = Object.keys(workflow.inputs);
  if (declared.length === 0) return inputs;
  return Object.fromEntries(Object.entries(inputs).filter(([name]) => declared.includes(name)));
}
