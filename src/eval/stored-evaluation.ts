/**
 * Evaluations stored by earlier versions, read in today's shape: run files outlive the code that
 * wrote them, and clients read the fields added since (the reference layers, `floor` and
 * `normalized_score` of floor violations, numbers for a criterion that did not apply). Pure; a
 * current evaluation comes back equal.
 */
import { referenceLayers } from './score-layers.js';
import { floorViolation } from './scoring.js';
import type { CriterionScore } from './types.js';

type Stored = Record<string, unknown>;

const isObject = (value: unknown): value is Stored =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

function criterionNow(c: Stored): Stored {
  const rubricWeight = typeof c.rubric_weight === 'number' ? c.rubric_weight : num(c.weight);
  // Earlier versions wrote null scores and the rubric's weight for a criterion that did not apply.
  if (c.applicable === false || c.normalized_score === null) {
    return {
      ...c,
      raw_score: 0,
      score: 0,
      weight: 0,
      rubric_weight: rubricWeight,
      normalized_score: 0,
      weighted_contribution: 0,
      applicable: false,
    };
  }
  return { ...c, rubric_weight: rubricWeight };
}

/** The stored `extra.evaluation` of a scored run, with the fields clients read filled in. */
export function storedEvaluationNow(stored: Stored): Stored {
  if (!Array.isArray(stored.criteria)) return stored;
  const criteria = stored.criteria.filter(isObject).map(criterionNow);
  const violations = Array.isArray(stored.floor_violations)
    ? stored.floor_violations.filter(isObject).map((v) =>
        typeof v.floor === 'number' && typeof v.normalized_score === 'number'
          ? v
          : {
              ...v,
              ...floorViolation(String(v.criterion), num(v.raw_score), num(v.critical_floor)),
            },
      )
    : [];
  const layers = isObject(stored.score_layers) ? stored.score_layers : {};
  return {
    ...stored,
    criteria,
    floor_violations: violations,
    score_layers:
      'layer1_objective' in layers
        ? layers
        : {
            ...layers,
            ...referenceLayers(
              criteria as unknown as Pick<
                CriterionScore,
                'metric' | 'weight' | 'normalized_score' | 'applicable'
              >[],
            ),
          },
  };
}
