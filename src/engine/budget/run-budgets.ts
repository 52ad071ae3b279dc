/**
 * A runtime's run budgets (docs/budgets.md): the gate its model calls go through, the budget each
 * run starts with (its workflow's and its request's, the stricter), a resumed run's (its start
 * record's, with a raise kept since) and the spend its run file already shows.
 */
import type { StepRecord } from '../../generated/run-record.js';
import type { ApprovalEventFields } from '../../events/event-mapper.js';
import type { CompiledWorkflow } from '../../workflow/types.js';
import type { EngineClock } from '../../../machines/engine-contract.js';
import type { ChildLaunch } from '../child-runs.js';
import type { ResumedLaunch } from '../run-resumer.js';
import type { BudgetOptions, ResolvedRuntimeOptions } from '../types.js';
import { createBudgetGate, type BudgetGate } from './budget-gate.js';
import {
  budgetFromWire,
  budgetOfExtra,
  mergeBudgets,
  type RunBudget,
  type RunBudgetRequest,
  type Spend,
} from './budget-limits.js';
import { forgetRaisedBudget, readRaisedBudget, saveRaisedBudget } from './raised-budget-file.js';
import { errorMessage } from '../../errors.js';

export interface RunBudgetsOptions {
  resolved: ResolvedRuntimeOptions;
  options: BudgetOptions | undefined;
  clock: EngineClock;
  emit: (runId: string, event: ApprovalEventFields) => void;
}

export interface RunBudgets {
  readonly gate: BudgetGate;
  /** A new run's budget: its workflow's `budget:` and its request's, the stricter. */
  ofRequest(
    workflow: CompiledWorkflow,
    request: RunBudgetRequest | undefined,
  ): RunBudget | undefined;
  /** A resumed run's budget: its run file's, with the limits last raised for it. */
  ofResumed(run: ResumedLaunch): Promise<RunBudget | undefined>;
  /** Run `runId` runs with `budget`; `steps`: a resumed run's finished steps (their spend). */
  open(
    runId: string,
    workflow: string,
    budget: RunBudget,
    extra: Record<string, unknown>,
    steps: readonly StepRecord[] | undefined,
  ): void;
  /** A child run spends from its parent's budget (when the parent has one). */
  join(runId: string, child: ChildLaunch, steps: readonly StepRecord[] | undefined): void;
  /** Run `runId` ended. */
  ended(runId: string): void;
}

export function createRunBudgets(options: RunBudgetsOptions): RunBudgets {
  const { resolved, clock } = options;
  const persisted = resolved.persist ? resolved.runsDir : undefined;
  const gate = createBudgetGate({
    callMaxTokens: resolved.budgetCallMaxTokens,
    price: options.options?.price,
    candidates: options.options?.candidates,
    now: () => clock.now(),
    emit: options.emit,
    saveRaise:
      persisted === undefined
        ? undefined
        : (runId, limits) => saveRaisedBudget(persisted, runId, limits),
    logger: resolved.logger,
  });
  /** Runs whose raise may have been kept in the runs directory. */
  const budgeted = new Set<string>();
  return {
    gate,
    ofRequest(workflow, request) {
      const document = workflow.document as { budget?: Parameters<typeof budgetFromWire>[0] };
      return mergeBudgets(
        budgetFromWire(document.budget),
        request ?? {},
        resolved.budgetStepDownAt,
      );
    },
    async ofResumed(run) {
      const budget = budgetOfExtra(run.extra, resolved.budgetStepDownAt);
      if (budget === undefined || persisted === undefined) return budget;
      const raised = await readRaisedBudget(persisted, run.runId);
      return raised === undefined ? budget : { ...budget, limits: { ...budget.limits, ...raised } };
    },
    open(runId, workflow, budget, extra, steps) {
      budgeted.add(runId);
      gate.open(runId, workflow, budget, extra, steps === undefined ? undefined : spendOf(steps));
    },
    join(runId, child, steps) {
      gate.join(
        runId,
        child.parent.runId,
        child.step,
        steps === undefined ? undefined : spendOf(steps),
      );
    },
    ended(runId) {
      gate.close(runId);
      if (!budgeted.delete(runId) || persisted === undefined) return;
      forgetRaisedBudget(persisted, runId).catch((error: unknown) =>
        resolved.logger.warn({ runId, err: errorMessage(error) }, 'raised budget file not removed'),
      );
    },
  };
}

/** What a run's step records show it spent: their tokens, and the dollars of the priced ones. */
export function spendOf(steps: readonly StepRecord[]): Spend {
  let tokens = 0;
  let costUsd: number | null = null;
  for (const step of steps) {
    tokens += step.tokens_used?.total ?? 0;
    const cost = (step as { cost_usd?: number | null }).cost_usd;
    if (typeof cost === 'number') costUsd = (costUsd ?? 0) + cost;
  }
  return { tokens, costUsd };
}
