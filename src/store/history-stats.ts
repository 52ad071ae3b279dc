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
  startMs: number;
}

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
}

function emptyBucket(): Bucket {
  return {
    total: 0,
    success: 0,
    failed: 0,
    durationSum: 0,
    durationCount: 0,
    tokensByDay: new Map(),
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
    if (sample.tokens > 0) {
      const day = Math.floor(sample.startMs / DAY_MS);
      const next = (bucket.tokensByDay.get(day) ?? 0) + sign * sample.tokens;
      if (next === 0) bucket.tokensByDay.delete(day);
      else bucket.tokensByDay.set(day, next);
      if (bucket.tokensByDay.size > TOKEN_DAYS) pruneDays(bucket, day);
    }
  }

  function pruneDays(bucket: Bucket, newestDay: number): void {
    for (const day of bucket.tokensByDay.keys()) {
      if (day <= newestDay - TOKEN_DAYS) bucket.tokensByDay.delete(day);
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
      for (const [name, bucket] of byWorkflow) {
        if (workflow !== undefined && name !== workflow) continue;
        names.push(name);
        total.total += bucket.total;
        total.success += bucket.success;
        total.failed += bucket.failed;
        total.durationSum += bucket.durationSum;
        total.durationCount += bucket.durationCount;
        for (const [day, count] of bucket.tokensByDay) if (day >= firstDay) tokens += count;
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
      };
    },
  };
}
