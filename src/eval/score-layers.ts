/**
 * The score layers of the reference service's evaluation (what its web UI reads:
 * `layer1_objective`, `layer2_judge`, `layer3_*`), computed from our scored criteria. Each is the
 * weighted mean of the layer's applicable criteria on 0–100, or null when the rubric gives the
 * layer no criterion that applied. Pure.
 */
import type { RubricCriterion } from '../generated/rubric.js';
import type { CriterionScore, ReferenceScoreLayers } from './types.js';

/** The reference layer each metric belongs to (advisory = similarity and efficiency together). */
export const METRIC_LAYERS = {
  status_success: 'objective',
  step_success_rate: 'objective',
  output_completeness: 'objective',
  judge: 'judge',
  expected_similarity: 'similarity',
  retries: 'efficiency',
  duration_ms: 'efficiency',
} as const satisfies Record<RubricCriterion['metric'], string>;
export type MetricLayer = (typeof METRIC_LAYERS)[keyof typeof METRIC_LAYERS];

type Scored = Pick<CriterionScore, 'metric' | 'weight' | 'normalized_score' | 'applicable'>;

const round2 = (x: number): number => Math.round(x * 100) / 100;

function layerOf(metric: string): MetricLayer | undefined {
  return Object.hasOwn(METRIC_LAYERS, metric)
    ? METRIC_LAYERS[metric as keyof typeof METRIC_LAYERS]
    : undefined;
}

/** Weighted mean (0–100) of the applicable criteria in `layers`; null when there are none. */
function layerScore(criteria: readonly Scored[], layers: readonly MetricLayer[]): number | null {
  let weights = 0;
  let sum = 0;
  for (const c of criteria) {
    const layer = layerOf(c.metric);
    if (!c.applicable || layer === undefined || !layers.includes(layer)) continue;
    weights += c.weight;
    sum += c.weight * c.normalized_score;
  }
  return weights > 0 ? round2((sum / weights) * 100) : null;
}

export function referenceLayers(criteria: readonly Scored[]): ReferenceScoreLayers {
  return {
    layer1_objective: layerScore(criteria, ['objective']),
    layer2_judge: layerScore(criteria, ['judge']),
    layer3_similarity: layerScore(criteria, ['similarity']),
    layer3_efficiency: layerScore(criteria, ['efficiency']),
    layer3_advisory: layerScore(criteria, ['similarity', 'efficiency']),
  };
}
