/**
 * The scoring math (pure): measured values → per-criterion scores → weighted score → floors →
 * hard gates → overall score, grade and pass. Worked examples live in test/unit/eval/scoring.test.ts.
 */
import { defaultFormula, defaultThresholds, normalize } from './formulas.js';
import { referenceLayers } from './score-layers.js';
import type {
  CriterionScore,
  EvaluationScore,
  FloorViolation,
  Grade,
  Measurement,
} from './types.js';
import type { LoadedRubric } from '../workflow/rubric.js';

/** Overall score ceiling when a critical floor is violated: the grade is at most D. */
export const FLOOR_CAP = 69;
/** Overall score ceiling when a hard gate fails: the grade is F. */
export const GATE_CAP = 59;

/** Two decimals: scores are shown, and floating noise (69.99999) would flip grades. */
export const round2 = (x: number): number => Math.round(x * 100) / 100;

/** A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, else F. */
export function gradeOf(score: number): Grade {
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}

/** A floor violation: ours on 0–100, and the reference service's `floor` and score on 0–1. */
export function floorViolation(
  criterion: string,
  rawScore: number,
  criticalFloor: number,
): FloorViolation {
  return {
    criterion,
    raw_score: rawScore,
    critical_floor: criticalFloor,
    floor: Math.round(criticalFloor * 100) / 10000,
    normalized_score: Math.round(rawScore * 100) / 10000,
  };
}

function scoreCriterion(
  criterion: LoadedRubric['criteria'][number],
  measurement: Measurement | undefined,
): CriterionScore {
  const formula = criterion.formula ?? defaultFormula(criterion.metric);
  const thresholds = criterion.thresholds ?? defaultThresholds(criterion.metric);
  const value = measurement?.value ?? null;
  const applicable = value !== null;
  // Not applicable: numbers all the same (clients do arithmetic on them), but no weight.
  const normalized = applicable ? round2(normalize(formula, value, thresholds) * 100) / 100 : 0;
  const raw = round2(normalized * 100);
  const weight = applicable ? criterion.weight : 0;
  const floor = criterion.critical_floor ?? null;
  return {
    criterion: criterion.id,
    name: criterion.name ?? criterion.id,
    metric: criterion.metric,
    formula,
    value,
    raw_score: raw,
    score: raw,
    max_score: 100,
    weight,
    rubric_weight: criterion.weight,
    normalized_score: normalized,
    weighted_contribution: round2(weight * normalized * 10000) / 10000,
    applicable,
    critical_floor: floor,
    floor_violated: applicable && floor !== null && raw < floor,
    detail: measurement?.detail ?? (measurement === undefined ? 'not measured' : null),
    error: measurement?.error ?? null,
  };
}

/**
 * Scores a run. `measurements` by criterion id (a missing or null one is not applicable: its
 * weight is left out and the others are renormalized, so a sample without an expected output
 * is not punished); `gates` by gate name, only the rubric's gates count.
 */
export function scoreRubric(
  rubric: LoadedRubric,
  measurements: Readonly<Record<string, Measurement>>,
  gates: Readonly<Record<string, boolean>>,
): EvaluationScore {
  const criteria = rubric.criteria.map((c) => scoreCriterion(c, measurements[c.id]));
  let weightSum = 0;
  let contribution = 0;
  for (const c of criteria) {
    if (!c.applicable) continue;
    weightSum += c.weight;
    contribution += c.weight * c.normalized_score;
  }
  const weighted = weightSum > 0 ? round2((contribution / weightSum) * 100) : 0;

  const floorViolations: FloorViolation[] = criteria
    .filter((c) => c.floor_violated)
    .map((c) => floorViolation(c.criterion, c.raw_score, c.critical_floor ?? 0));
  const afterFloors = floorViolations.length > 0 ? Math.min(weighted, FLOOR_CAP) : weighted;

  const hardGates: Record<string, boolean> = {};
  for (const gate of rubric.hardGates) hardGates[gate] = gates[gate] === true;
  const gateFailures = rubric.hardGates.filter((gate) => !hardGates[gate]);
  const overall = gateFailures.length > 0 ? Math.min(afterFloors, GATE_CAP) : afterFloors;

  return {
    rubric: rubric.name,
    rubric_id: rubric.id,
    rubric_version: rubric.version,
    weighted_score: weighted,
    overall_score: overall,
    grade: gradeOf(overall),
    passed: gateFailures.length === 0 && overall >= rubric.passThreshold,
    pass_threshold: rubric.passThreshold,
    criteria,
    score_layers: {
      weighted,
      weighted_grade: gradeOf(weighted),
      after_floors: afterFloors,
      after_gates: overall,
      ...referenceLayers(criteria),
    },
    hard_gates: hardGates,
    floor_violations: floorViolations,
    hard_gate_failures: gateFailures,
  };
}
