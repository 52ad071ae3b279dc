import type { RubricCriterion } from '../generated/rubric.js';
import { FORMULAS, type Formula } from './types.js';

/** The formula a criterion uses when it names none: what its metric measures. */
export function defaultFormula(metric: RubricCriterion['metric']): Formula {
  switch (metric) {
    case 'status_success':
      return FORMULAS.BINARY;
    case 'step_success_rate':
    case 'output_completeness':
    case 'expected_similarity':
      return FORMULAS.ZERO_ONE;
    case 'retries':
    case 'duration_ms':
      return FORMULAS.LOWER_IS_BETTER;
    case 'judge':
      return FORMULAS.LIKERT_1_5;
    default: {
      const never: never = metric;
      throw new Error(`unknown metric ${String(never)}`);
    }
  }
}

/** Thresholds of `lower_is_better` when a criterion gives none, by metric. */
export function defaultThresholds(metric: RubricCriterion['metric']): {
  good: number;
  bad: number;
} {
  if (metric === 'duration_ms') return { good: 60_000, bad: 300_000 };
  return { good: 0, bad: 3 };
}

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/**
 * A measured value → normalized score (0–1):
 * - `zero_one`: the value itself, clamped to 0–1;
 * - `binary`: 1 when the value is at least 0.5, else 0;
 * - `likert_1_5`: 1 → 0, 3 → 0.5, 5 → 1 (clamped to 1–5);
 * - `lower_is_better`: 1 at or below `good`, 0 at or above `bad`, linear between.
 */
export function normalize(
  formula: Formula,
  value: number,
  thresholds: { good: number; bad: number },
): number {
  switch (formula) {
    case FORMULAS.ZERO_ONE:
      return clamp01(value);
    case FORMULAS.BINARY:
      return value >= 0.5 ? 1 : 0;
    case FORMULAS.LIKERT_1_5:
      return clamp01((value - 1) / 4);
    case FORMULAS.LOWER_IS_BETTER: {
      const { good, bad } = thresholds;
      if (value <= good) return 1;
      if (value >= bad) return 0;
      return clamp01((bad - value) / (bad - good));
    }
    default: {
      const never: never = formula;
      throw new Error(`unknown formula ${String(never)}`);
    }
  }
}
