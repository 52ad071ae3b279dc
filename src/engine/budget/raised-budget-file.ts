/**
 * A run's raised budget, kept beside its run file until it ends (`<runs>/.budgets/<run_id>.json`,
 * written durably before the raise applies): a run resumed after a restart goes on with the
 * budget a person raised, not with the one its start record names (docs/budgets.md).
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../files/atomic-write.js';
import { limitsToWire, type BudgetLimits } from './budget-limits.js';

const DIR = '.budgets';

const fileOf = (runsDir: string, runId: string): string => join(runsDir, DIR, `${runId}.json`);

export async function saveRaisedBudget(
  runsDir: string,
  runId: string,
  limits: BudgetLimits,
): Promise<void> {
  await mkdir(join(runsDir, DIR), { recursive: true });
  await writeFileAtomic(fileOf(runsDir, runId), JSON.stringify(limitsToWire(limits)));
}

/** The limits last raised for run `runId`; undefined when none were (or the file is unreadable). */
export async function readRaisedBudget(
  runsDir: string,
  runId: string,
): Promise<BudgetLimits | undefined> {
  let text: string;
  try {
    text = await readFile(fileOf(runsDir, runId), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const wire = JSON.parse(text) as { max_cost_usd?: unknown; max_tokens?: unknown };
    const limits: BudgetLimits = {};
    if (typeof wire.max_cost_usd === 'number') limits.maxCostUsd = wire.max_cost_usd;
    if (typeof wire.max_tokens === 'number') limits.maxTokens = wire.max_tokens;
    return limits.maxCostUsd === undefined && limits.maxTokens === undefined ? undefined : limits;
  } catch {
    return undefined;
  }
}

/** Removes run `runId`'s raised budget (its run ended). */
export async function forgetRaisedBudget(runsDir: string, runId: string): Promise<void> {
  await rm(fileOf(runsDir, runId), { force: true });
}
