/**
 * The rubric format, shared by a workflow's own `evaluation` block and rubric files
 * (`<eval dir>/rubrics/<id>.yaml`, read by src/eval/rubric-file.ts): validated against
 * `schemas/rubric.schema.json` (ajv, precompiled), then checked for what a schema cannot say: weights summing
 * to 1 ± 0.01, unique criterion ids, `good < bad`. Pure (no I/O). It lives in workflow/ because
 * workflow validation checks a workflow's own rubric at load; src/eval scores with it.
 */
import type { ValidateFunction } from 'ajv';
import { ValidationError, type ErrorDetail } from '../errors.js';
import type { Rubric, RubricCriterion } from '../generated/rubric.js';
import { validate as validateRubricSchema } from '../generated/validators/rubric.js';

export const HARD_GATES = {
  REQUIRED_OUTPUTS_PRESENT: 'required_outputs_present',
  OVERALL_STATUS_SUCCESS: 'overall_status_success',
  NO_CRITICAL_STEP_FAILURES: 'no_critical_step_failures',
} as const;
export type HardGate = (typeof HARD_GATES)[keyof typeof HARD_GATES];
export const ALL_HARD_GATES: readonly HardGate[] = Object.values(HARD_GATES);

/** Default pass threshold (overall score, 0–100). */
export const DEFAULT_PASS_THRESHOLD = 70;

/** A rubric after loading: defaults applied, weights checked. */
export interface LoadedRubric {
  id: string;
  name: string;
  version: string;
  description: string;
  passThreshold: number;
  hardGates: readonly HardGate[];
  criteria: readonly RubricCriterion[];
}

/** How far the weights may sum from 1. */
export const WEIGHT_TOLERANCE = 0.01;
/** Rubric ids: file stems. */
export const RUBRIC_ID = /^[A-Za-z0-9_.-]{1,128}$/;
/** The rubric used when neither the request nor the workflow names one. */
export const DEFAULT_RUBRIC_ID = 'default';

// Precompiled from schemas/rubric.schema.json by `npm run gen` (scripts/validators.ts).
const validateSchema = validateRubricSchema as ValidateFunction<Rubric>;

/**
 * Validates rubric data (parsed YAML or a workflow's `evaluation` block, from which the keys a
 * rubric does not have are dropped by the caller). Throws a 422 listing every problem.
 */
export function loadRubric(data: unknown, fallbackId: string, field = 'rubric'): LoadedRubric {
  if (!validateSchema(data)) {
    const details: ErrorDetail[] = (validateSchema.errors ?? []).map((e) => ({
      loc: [field, ...e.instancePath.split('/').filter((p) => p !== '')],
      msg: `${e.instancePath || 'rubric'} ${e.message ?? 'is invalid'}`,
      type: `value_error.rubric.${e.keyword}`,
    }));
    throw new ValidationError(`invalid rubric ${fallbackId}: ${details[0]?.msg ?? ''}`, details);
  }
  const problems: ErrorDetail[] = [];
  const sum = data.criteria.reduce((total, c) => total + c.weight, 0);
  if (Math.abs(sum - 1) > WEIGHT_TOLERANCE) {
    problems.push({
      loc: [field, 'criteria'],
      msg: `criterion weights sum to ${Math.round(sum * 1000) / 1000}; they must sum to 1 ± ${WEIGHT_TOLERANCE}`,
      type: 'value_error.rubric.weights',
    });
  }
  const seen = new Set<string>();
  data.criteria.forEach((c, i) => {
    if (seen.has(c.id)) {
      problems.push({
        loc: [field, 'criteria', i, 'id'],
        msg: `duplicate criterion id ${c.id}`,
        type: 'value_error.rubric.duplicate',
      });
    }
    seen.add(c.id);
    if (c.thresholds !== undefined && !(c.thresholds.good < c.thresholds.bad)) {
      problems.push({
        loc: [field, 'criteria', i, 'thresholds'],
        msg: `criterion ${c.id}: thresholds.good must be below thresholds.bad`,
        type: 'value_error.rubric.thresholds',
      });
    }
  });
  if (problems.length > 0) {
    throw new ValidationError(`invalid rubric ${fallbackId}: ${problems[0]?.msg ?? ''}`, problems);
  }
  const id = data.id ?? fallbackId;
  return {
    id,
    name: data.name ?? id,
    version: data.version === undefined ? '1' : String(data.version),
    description: data.description ?? '',
    passThreshold: data.pass_threshold ?? DEFAULT_PASS_THRESHOLD,
    hardGates: (data.hard_gates as HardGate[] | undefined) ?? ALL_HARD_GATES,
    criteria: data.criteria,
  };
}

/** The rubric keys of a workflow's `evaluation` block (which also holds dataset settings). */
const RUBRIC_KEYS = [
  'id',
  'name',
  'version',
  'description',
  'pass_threshold',
  'hard_gates',
  'criteria',
];

/**
 * A workflow's own rubric: its `evaluation` block when it has `criteria` (id
 * `<workflow>.evaluation` unless it names one), else undefined.
 */
export function workflowRubric(
  workflowName: string,
  evaluation: Record<string, unknown> | undefined,
): LoadedRubric | undefined {
  if (evaluation === undefined || evaluation.criteria === undefined) return undefined;
  const data = Object.fromEntries(
    Object.entries(evaluation).filter(([k]) => RUBRIC_KEYS.includes(k)),
  );
  return loadRubric(data, `${workflowName}.evaluation`, 'evaluation');
}
