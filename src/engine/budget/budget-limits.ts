/**
 * A run's budget (docs/budgets.md): the limits of a workflow's `budget:` and of the run request's,
 * merged (the stricter wins, per dimension), and the shapes the run file and the wire give them.
 */
import { createHash } from 'node:crypto';
import type { WorkflowBudget } from '../../generated/workflow.js';

/** What a run does at its budget: wait for a person to raise it, or fail (`budget_exceeded`). */
export const BUDGET_POLICIES = { PAUSE: 'pause', FAIL: 'fail' } as const;
export type BudgetPolicy = (typeof BUDGET_POLICIES)[keyof typeof BUDGET_POLICIES];

/** The limits of a budget; an absent one does not limit. */
export interface BudgetLimits {
  /** US dollars the run's model calls may cost. */
  maxCostUsd?: number;
  /** Tokens (input + output) the run's model calls may use. */
  maxTokens?: number;
}

/** A budget as a run request or a workflow gives it (every field optional). */
export interface RunBudgetRequest extends BudgetLimits {
  /** @default 'pause' */
  onExceeded?: BudgetPolicy;
  /** Share of a limit spent from which LLM steps run one tier lower. @default the runtime's */
  stepDownAt?: number;
}

/** The budget a run runs with. */
export interface RunBudget {
  limits: BudgetLimits;
  onExceeded: BudgetPolicy;
  stepDownAt: number;
}

/** What a run has spent: tokens, and US dollars of its priced calls (null: none priced yet). */
export interface Spend {
  tokens: number;
  costUsd: number | null;
}

/** The wire shape (YAML `budget:`, the run request's `budget`, `extra.budget`) as a request. */
export function budgetFromWire(wire: WorkflowBudget | null | undefined): RunBudgetRequest {
  if (wire === null || wire === undefined) return {};
  return {
    ...(wire.max_cost_usd === undefined ? {} : { maxCostUsd: wire.max_cost_usd }),
    ...(wire.max_tokens === undefined ? {} : { maxTokens: wire.max_tokens }),
    ...(wire.on_exceeded === undefined ? {} : { onExceeded: wire.on_exceeded }),
    ...(wire.step_down_at === undefined ? {} : { stepDownAt: wire.step_down_at }),
  };
}

const lower = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * The budget of a run from its workflow's and its request's: per dimension the stricter (the
 * lower limit, `fail` over `pause`, the lower step-down share). Undefined when neither sets a
 * limit: the run has no budget.
 */
export function mergeBudgets(
  workflow: RunBudgetRequest,
  request: RunBudgetRequest,
  defaultStepDownAt: number,
): RunBudget | undefined {
  const maxCostUsd = lower(workflow.maxCostUsd, request.maxCostUsd);
  const maxTokens = lower(workflow.maxTokens, request.maxTokens);
  if (maxCostUsd === undefined && maxTokens === undefined) return undefined;
  const fails = workflow.onExceeded === 'fail' || request.onExceeded === 'fail';
  return {
    limits: {
      ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
      ...(maxTokens === undefined ? {} : { maxTokens }),
    },
    onExceeded: fails ? BUDGET_POLICIES.FAIL : BUDGET_POLICIES.PAUSE,
    stepDownAt: lower(lower(workflow.stepDownAt, request.stepDownAt), defaultStepDownAt)!,
  };
}

/** Limits on the wire (`max_cost_usd`, `max_tokens`). */
export function limitsToWire(limits: BudgetLimits): { max_cost_usd?: number; max_tokens?: number } {
  return {
    ...(limits.maxCostUsd === undefined ? {} : { max_cost_usd: limits.maxCostUsd }),
    ...(limits.maxTokens === undefined ? {} : { max_tokens: limits.maxTokens }),
  };
}

/** A spend on the wire (`{tokens, cost_usd}`). */
export function spendToWire(spend: Spend): { tokens: number; cost_usd: number | null } {
  return { tokens: spend.tokens, cost_usd: spend.costUsd };
}

/** The run file's `extra.budget`: the budget, and what the run has spent against it. */
export function budgetExtra(budget: RunBudget, spent: Spend): Record<string, unknown> {
  return {
    ...limitsToWire(budget.limits),
    on_exceeded: budget.onExceeded,
    step_down_at: budget.stepDownAt,
    spent: spendToWire(spent),
  };
}

/** The budget a run file's `extra.budget` names (a resumed run's), undefined when none. */
export function budgetOfExtra(
  extra: Record<string, unknown> | undefined,
  defaultStepDownAt: number,
): RunBudget | undefined {
  const wire = extra?.budget;
  if (typeof wire !== 'object' || wire === null) return undefined;
  return mergeBudgets(budgetFromWire(wire), {}, defaultStepDownAt);
}

/**
 * The id of a run's pause at `limits`: a UUID-shaped hash of both, so a resumed run paused at the
 * same budget asks again with the id its clients already have, and a run paused again after a
 * raise asks with a new one.
 */
export function budgetRequestId(runId: string, limits: BudgetLimits): string {
  const hex = createHash('sha256')
    .update(JSON.stringify([runId, 'budget', limits.maxCostUsd ?? null, limits.maxTokens ?? null]))
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** "600 tokens of 500 (max_tokens)" and/or "$1.20 of $1.00 (max_cost_usd)": what is reached. */
export function describeReached(limits: BudgetLimits, spent: Spend): string {
  const parts: string[] = [];
  if (limits.maxTokens !== undefined && spent.tokens >= limits.maxTokens) {
    parts.push(`${spent.tokens} tokens of its ${limits.maxTokens} (max_tokens)`);
  }
  if (limits.maxCostUsd !== undefined && (spent.costUsd ?? 0) >= limits.maxCostUsd) {
    parts.push(`$${usd(spent.costUsd ?? 0)} of its $${usd(limits.maxCostUsd)} (max_cost_usd)`);
  }
  return parts.join(' and ');
}

function usd(value: number): string {
  return value >= 1 ? value.toFixed(2) : value.toPrecision(3);
}
