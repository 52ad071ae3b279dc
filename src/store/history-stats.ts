/**
 * Running aggregates over every indexed run (all runs seen since start-up, not only the index
 * window), so `GET /api/runs/summary` is O(workflows) and memory does not grow with run count.
 */

const DAY_MS = 86_400_000;
/** Days of token totals kept per workflow (the summary asks for 30). */
const TOKEN_DAYS = 31;

/** The part of a run the aggregates count. */
export interface StatsSample {
  workflow: string;
  status: string;
  durationMs: number | null;
  tokens: number;
  /** USD; null: unknown (some tokens were spent on a model without a price). */
  cost: number | null;
  startMs: number;
}

import { roundUsd } from '../llm/prices.js';

/** The spec's primary Runs summary shape, generated from schemas/api. */
import type { RunsSummaryResponse as RunsSummary } from '../generated/api/runs-summary-response.js';

export type { RunsSummary };

interface Bucket {
  total: number;
  success: number;
  failed: number;
  durationSum: number;
  durationCount: number;
  /** UTC day number → tokens of runs started that day. */
  tokensByDay: Map<number, number>;
  /** UTC day number → USD of the runs started that day whose cost is known. */
  costByDay: Map<number, number>;
  /** UTC day number → runs started that day whose cost is unknown. */
  unpricedByDay: Map<number, number>;
}

function emptyBucket(): Bucket {
  return {
    total: 0,
    success: 0,
    failed: 0,
    durationSum: 0,
    durationCount: 0,
    tokensByDay: new Map(),
    costByDay: new Map(),
    unpricedByDay: new Map(),
  };
}

function isFinished(status: string): boolean {
  return status === 'success' || status === 'failed';
}

export interface HistoryStats {
  /** Adds a run (sign 1) or removes its previous version (sign -1). */
  apply(sample: StatsSample, sign: 1 | -1): void;
  summarize(options: { workflow?: string | undefined; now: number }): RunsSummary;
}

export function createHistoryStats(): HistoryStats {
  const byWorkflow = new Map<string, Bucket>();

  function applyTo(bucket: Bucket, sample: StatsSample, sign: 1 | -1): void {
    bucket.total += sign;
    if (sample.status === 'success') bucket.success += sign;
    if (sample.status === 'failed') bucket.failed += sign;
    if (isFinished(sample.status) && sample.durationMs !== null) {
      bucket.durationSum += sign * sample.durationMs;
      bucket.durationCount += sign;
    }
    const day = Math.floor(sample.startMs / DAY_MS);
    if (sample.tokens > 0) addToDay(bucket.tokensByDay, day, sign * sample.tokens);
    if (sample.cost === null) addToDay(bucket.unpricedByDay, day, sign);
    // Rounded: a cost added and later removed (a run's record replaced) must come back to 0.
    else if (sample.cost > 0) addToDay(bucket.costByDay, day, sign * sample.cost, roundUsd);
  }

  /** Adds to a day's total; keeps at most TOKEN_DAYS days, dropping a day that falls to 0. */
  function addToDay(
    days: Map<number, number>,
    day: number,
    amount: number,
    round: (value: number) => number = (value) => value,
  ): void {
    const next = round((days.get(day) ?? 0) + amount);
    if (next === 0) days.delete(day);
    else days.set(day, next);
    if (days.size > TOKEN_DAYS) {
      for (const kept of days.keys()) if (kept <= day - TOKEN_DAYS) days.delete(kept);
    }
  }

  return {
    apply(sample, sign) {
      let bucket = byWorkflow.get(sample.workflow);
      if (bucket === undefined) {
        bucket = emptyBucket();
        byWorkflow.set(sample.workflow, bucket);
      }
      applyTo(bucket, sample, sign);
      if (bucket.total <= 0) byWorkflow.delete(sample.workflow);
    },
    summarize({ workflow, now }) {
      const total = emptyBucket();
      const names: string[] = [];
      const firstDay = Math.floor((now - 30 * DAY_MS) / DAY_MS);
      let tokens = 0;
      let cost = 0;
      let unpriced = 0;
      for (const [name, bucket] of byWorkflow) {
        if (workflow !== undefined && name !== workflow) continue;
        names.push(name);
        total.total += bucket.total;
        total.success += bucket.success;
        total.failed += bucket.failed;
        total.durationSum += bucket.durationSum;
        total.durationCount += bucket.durationCount;
        for (const [day, count] of bucket.tokensByDay) if (day >= firstDay) tokens += count;
        for (const [day, usd] of bucket.costByDay) if (day >= firstDay) cost += usd;
        for (const [day, runs] of bucket.unpricedByDay) if (day >= firstDay) unpriced += runs;
      }
      return {
        total_runs: total.total,
        success: total.success,
        failed: total.failed,
        avg_duration_ms:
          total.durationCount === 0
            ? 0
            : Math.round((total.durationSum / total.durationCount) * 100) / 100,
        workflows: names.sort(),
        tokens_30d: tokens,
        cost_30d: roundUsd(cost),
        cost_30d_unpriced_runs: unpriced,
      };
    },
  };
}
