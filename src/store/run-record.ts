/**
 * Run records (the run file's content, `schemas/run-record.schema.json`) built from a workflow
 * and its step outcomes. Errors are messages only; a stack trace never reaches a record.
 */
import type { StepOutcome } from '../../machines/engine-contract.js';
import type { AdapterName } from '../config/adapter-names.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { addCost } from '../llm/types.js';
import { usageCost, usageRecord } from '../llm/usage-record.js';
import { STEP_STATUS, type CompiledStep, type CompiledWorkflow } from '../workflow/types.js';

/** What a record is built from, besides the outcomes. */
export interface RunRecordBase {
  runId: string;
  workflow: CompiledWorkflow;
  adapter: AdapterName;
  inputs: Record<string, unknown>;
  /** Epoch ms. */
  startTime: number;
  extra: Record<string, unknown>;
  /**
   * Formats the record's times: the runtime's {@link createIsoTime} (its cache is the runtime's).
   * @default `new Date(ms).toISOString()`, uncached
   */
  isoTime?: IsoTime;
}

/**
 * Where each step's events went in the run's live event sequence (the run's event mapper):
 * recorded as `start_seq`/`end_seq`, so a replay from the file keeps the live order of steps
 * that ran in parallel.
 */
export interface StepEventOrder {
  startSeq(index: number): number | undefined;
  endSeq(index: number): number | undefined;
}

/** Epoch ms → ISO 8601 text (`2024-01-02T03:04:05.678Z`). */
export type IsoTime = (ms: number) => string;

const plainIso: IsoTime = (ms) => new Date(ms).toISOString();

/** The record written when a run starts: `running`, every step `pending`. */
export function startedRunRecord(base: RunRecordBase): RunRecord {
  const iso = base.isoTime ?? plainIso;
  return {
    run_id: base.runId,
    workflow_name: base.workflow.name,
    adapter: base.adapter,
    inputs: base.inputs,
    step_count: base.workflow.steps.length,
    start_time: iso(base.startTime),
    extra: base.extra,
    status: 'running',
    steps: base.workflow.steps.map((step) => ({
      step_name: step.name,
      status: STEP_STATUS.PENDING,
      agent: step.agent,
      tier: String(step.tier),
      model_used: null,
      tokens_used: null,
      duration_ms: 0,
      retry_count: 0,
      input: null,
      output: null,
      error: null,
      start_time: null,
      end_time: null,
      metadata: {},
    })),
    final_output: null,
    success_rate: 0,
    total_duration_ms: null,
    failed_step_count: 0,
    end_time: null,
    error: null,
  };
}

/** The record written when a run ends. `outcomes` has one entry per step, in YAML order. */
export function finishedRunRecord(
  base: RunRecordBase,
  end: {
    status: 'success' | 'failed';
    error: string | null;
    outcomes: readonly StepOutcome[];
    finalOutput: Record<string, unknown> | null;
    endTime: number;
    order?: StepEventOrder;
  },
): RunRecord {
  const iso = base.isoTime ?? plainIso;
  const workflowSteps = base.workflow.steps;
  const steps = new Array<StepRecord>(workflowSteps.length);
  for (let i = 0; i < workflowSteps.length; i++) {
    const step = workflowSteps[i]!;
    const outcome = end.outcomes[i];
    if (outcome === undefined) throw new Error(`missing outcome of step ${step.name}`);
    steps[i] = stepRecord(step, outcome, iso, end.order, i);
  }
  // One object literal in the file's key order, not `{ ...common, ... }`: a spread copy that
  // then gets eight more keys cost more than the rest of the record (~7 % of a no-op run's CPU
  // in the many-runs profile, docs/benchmarks.md "Many runs").
  return {
    run_id: base.runId,
    workflow_name: base.workflow.name,
    adapter: base.adapter,
    inputs: base.inputs,
    step_count: workflowSteps.length,
    start_time: iso(base.startTime),
    extra: base.extra,
    status: end.status,
    steps,
    final_output: end.finalOutput,
    success_rate: successRate(end.outcomes),
    total_duration_ms: Math.max(0, end.endTime - base.startTime),
    failed_step_count: failedCount(end.outcomes),
    end_time: iso(end.endTime),
    error: end.error,
    cost_usd: runCost(steps),
  };
}

/**
 * The run's cost: the sum of its steps' costs, null when one of them is unknown (an under-count
 * is not shown as the cost).
 */
export function runCost(steps: readonly StepRecord[]): number | null {
  let sum: number | null = 0;
  for (const step of steps) sum = addCost(sum, step.cost_usd ?? null);
  return sum;
}

/**
 * The record of one finished step (also what the run journal holds for it); with `order`, the
 * `seq` of its `step_start` and `step_end` (step `index`).
 */
export function stepRecord(
  step: CompiledStep,
  outcome: StepOutcome,
  iso: IsoTime = plainIso,
  order?: StepEventOrder,
  index = 0,
): StepRecord {
  const metadata: StepRecord['metadata'] = {
    attempts: outcome.attempts,
    iterations: outcome.iterations,
  };
  if (outcome.skipReason !== null) metadata.skip_reason = outcome.skipReason;
  if (outcome.items !== undefined) metadata.items = outcome.items;
  if (outcome.reusedFrom !== undefined) {
    metadata.reused_from = {
      run_id: outcome.reusedFrom.runId,
      tokens_used: usageRecord(outcome.reusedFrom.tokensUsed),
      cost_usd: usageCost(outcome.reusedFrom.tokensUsed),
    };
  }
  const startSeq = order?.startSeq(index);
  const endSeq = order?.endSeq(index);
  const duration =
    outcome.startTime === null ? 0 : Math.max(0, outcome.endTime - outcome.startTime);
  const startTime = outcome.startTime === null ? null : iso(outcome.startTime);
  // The common shape (both seqs, no verification, no messages) as one literal: the conditional
  // spreads below cost a copy each (see finishedRunRecord). Same keys, same order.
  if (
    startSeq !== undefined &&
    endSeq !== undefined &&
    outcome.verification === undefined &&
    outcome.messages === undefined
  ) {
    return {
      step_name: step.name,
      status: outcome.status,
      agent: step.agent,
      tier: String(step.tier),
      model_used: outcome.modelUsed,
      tokens_used: usageRecord(outcome.tokensUsed),
      cost_usd: usageCost(outcome.tokensUsed),
      duration_ms: duration,
      retry_count: Math.max(0, outcome.attempts - 1),
      input: outcome.input ?? null,
      output: outcome.output,
      error: outcome.error,
      start_time: startTime,
      end_time: iso(outcome.endTime),
      start_seq: startSeq,
      end_seq: endSeq,
      metadata,
    };
  }
  return {
    step_name: step.name,
    status: outcome.status,
    agent: step.agent,
    tier: String(step.tier),
    model_used: outcome.modelUsed,
    tokens_used: usageRecord(outcome.tokensUsed),
    cost_usd: usageCost(outcome.tokensUsed),
    duration_ms: duration,
    retry_count: Math.max(0, outcome.attempts - 1),
    input: outcome.input ?? null,
    output: outcome.output,
    error: outcome.error,
    start_time: startTime,
    end_time: iso(outcome.endTime),
    ...(outcome.verification === undefined ? {} : { verification: outcome.verification }),
    ...(outcome.messages === undefined ? {} : { messages: outcome.messages }),
    ...(startSeq === undefined ? {} : { start_seq: startSeq }),
    ...(endSeq === undefined ? {} : { end_seq: endSeq }),
    metadata,
  };
}

/**
 * Brings a record read from a run file up to the current shape, in place: files written before
 * tiers became strings hold numbers (`"tier": 0`), which clients of the Python service render
 * as a stray "0". Returns the record.
 */
export function upgradeRecord(record: RunRecord): RunRecord {
  for (const step of record.steps as unknown[]) {
    if (typeof step !== 'object' || step === null) continue;
    const s = step as { tier?: unknown };
    if (typeof s.tier === 'number') s.tier = String(s.tier);
  }
  return record;
}

/**
 * Percentage (0–100) of the steps that succeeded, among the steps that were meant to run: a
 * step skipped by its own false `when:` is a normal outcome and is left out. 100 when no step
 * was meant to run.
 */
export function successRate(outcomes: readonly StepOutcome[]): number {
  let considered = 0;
  let succeeded = 0;
  for (const outcome of outcomes) {
    if (outcome.status === STEP_STATUS.SKIPPED && outcome.skipReason === 'condition false') {
      continue;
    }
    considered++;
    if (outcome.status === STEP_STATUS.SUCCESS) succeeded++;
  }
  return considered === 0 ? 100 : Math.round((succeeded / considered) * 10000) / 100;
}

function failedCount(outcomes: readonly StepOutcome[]): number {
  let failed = 0;
  for (const outcome of outcomes) if (outcome.status === STEP_STATUS.FAILED) failed++;
  return failed;
}

/** `000Z` … `999Z`: the millisecond tails appended to a second's prefix. */
const MS_TAILS = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);

/**
 * An ISO time formatter with its own cache, one per runtime. The steps of a run mostly start and
 * end within the same second, so the last conversion is remembered, and other milliseconds of
 * the same second reuse its prefix (`toISOString` is the costliest part of building a record of
 * a large run; a fan-out's steps alternate between their common start time and their own end
 * times).
 */
export function createIsoTime(): IsoTime {
  let lastMs = Number.NaN;
  let lastIso = '';
  /** Epoch ms of the second whose ISO prefix (up to and including the `.`) is `secondPrefix`. */
  let secondStart = Number.NaN;
  let secondPrefix = '';
  return (ms) => {
    if (ms === lastMs) return lastIso;
    const offset = ms - secondStart;
    if (offset >= 0 && offset < 1000 && Number.isInteger(offset)) {
      lastIso = secondPrefix + MS_TAILS[offset]!;
    } else {
      const text = new Date(ms).toISOString();
      if (Number.isInteger(ms)) {
        secondStart = ms - (((ms % 1000) + 1000) % 1000);
        secondPrefix = text.slice(0, -4);
      }
      lastIso = text;
    }
    lastMs = ms;
    return lastIso;
  };
}
