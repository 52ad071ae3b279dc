/**
 * Shapes of evaluation results: what `extra.evaluation` holds in a run file, what
 * `evaluation_complete` carries and what `GET /api/runs/{filename}/evaluation` returns. Scores
 * are on 0–100 except `normalized_score` (0–1); arrays are always present (possibly empty).
 */
import type { Rubric, RubricCriterion } from '../generated/rubric.js';

export type { Rubric, RubricCriterion };

export const FORMULAS = {
  ZERO_ONE: 'zero_one',
  BINARY: 'binary',
  LIKERT_1_5: 'likert_1_5',
  LOWER_IS_BETTER: 'lower_is_better',
} as const;
export type Formula = (typeof FORMULAS)[keyof typeof FORMULAS];

export const GRADES = ['A', 'B', 'C', 'D', 'F'] as const;
export type Grade = (typeof GRADES)[number];

/** What one criterion measured: a value in its formula's units, or not applicable. */
export interface Measurement {
  /** The measured value; null when the criterion does not apply (or its measure failed). */
  value: number | null;
  /** Why the value is null, or how it was measured. */
  detail?: string;
  /** Set when measuring failed (e.g. the judge answered nothing usable). */
  error?: string;
}

/**
 * One scored criterion (the UI reads `criterion`, `weight`, `raw_score`, `normalized_score`,
 * `weighted_contribution`: numbers always, as the spec's criterion entry says). A criterion that
 * did not apply is `applicable: false` with scores 0 and weight 0; `rubric_weight` keeps the
 * weight the rubric gives it.
 */
export interface CriterionScore {
  criterion: string;
  name: string;
  metric: string;
  formula: Formula;
  /** The measured value in the formula's units (null: not applicable). */
  value: number | null;
  /** 0–100 (0: not applicable). */
  raw_score: number;
  /** Same as raw_score, for clients of the reference service. */
  score: number;
  max_score: 100;
  /** The weight this criterion counted with: the rubric's, or 0 when not applicable. */
  weight: number;
  /** The weight the rubric gives this criterion. */
  rubric_weight: number;
  /** 0–1 (0: not applicable). */
  normalized_score: number;
  /** weight × normalized_score (0 when not applicable). */
  weighted_contribution: number;
  applicable: boolean;
  critical_floor: number | null;
  floor_violated: boolean;
  detail: string | null;
  error: string | null;
}

export interface FloorViolation {
  criterion: string;
  /** 0–100. */
  raw_score: number;
  /** 0–100, as the rubric declares it. */
  critical_floor: number;
  /** `critical_floor` on 0–1, for clients of the reference service. */
  floor: number;
  /** `raw_score` on 0–1, for clients of the reference service. */
  normalized_score: number;
}

/**
 * The reference service's layers (0–100; null when no criterion of the layer applied), from
 * the criteria by metric: objective (status_success, step_success_rate, output_completeness),
 * judge, similarity (expected_similarity), efficiency (retries, duration_ms), and advisory
 * (similarity and efficiency together). See `score-layers.ts`.
 */
export interface ReferenceScoreLayers {
  layer1_objective: number | null;
  layer2_judge: number | null;
  layer3_similarity: number | null;
  layer3_efficiency: number | null;
  layer3_advisory: number | null;
}

/** The layers the final score was built from, in order, and the reference service's layers. */
export interface ScoreLayers extends ReferenceScoreLayers {
  /** Σ weight × normalized over applicable criteria ÷ their weights, × 100. */
  weighted: number;
  /** Grade of `weighted` alone. */
  weighted_grade: Grade;
  /** Overall score after the floor cap (69) when a floor is violated. */
  after_floors: number;
  /** Overall score after the gate cap (59) when a hard gate fails. */
  after_gates: number;
}

/** The result of scoring one run against one rubric. */
export interface EvaluationScore {
  rubric: string;
  rubric_id: string;
  rubric_version: string;
  weighted_score: number;
  overall_score: number;
  grade: Grade;
  passed: boolean;
  pass_threshold: number;
  criteria: CriterionScore[];
  score_layers: ScoreLayers;
  hard_gates: Record<string, boolean>;
  floor_violations: FloorViolation[];
  hard_gate_failures: string[];
}
