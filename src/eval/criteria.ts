/**
 * Criteria computed from a finished run (status, retries, duration, output completeness,
 * similarity to the sample's expected output) and the three hard gates. Pure.
 */
import type { RunRecord } from '../generated/run-record.js';
import type { RubricCriterion } from '../generated/rubric.js';
import { STEP_STATUS, type CompiledWorkflow } from '../workflow/types.js';
import type { Measurement } from './types.js';
import { HARD_GATES } from '../workflow/rubric.js';

/** What the computed criteria look at besides the run record. */
export interface RunContext {
  record: RunRecord;
  workflow: Pick<CompiledWorkflow, 'outputNames' | 'optionalOutputs' | 'document'>;
  /** The sample's expected output, when it has one. */
  expected: string | undefined;
}

const present = (value: unknown): boolean =>
  value !== undefined &&
  value !== null &&
  !(typeof value === 'string' && value.trim() === '') &&
  !(Array.isArray(value) && value.length === 0);

/** Every string (and number) inside a value, in order: what a reader of the output sees. */
export function candidateText(value: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 20 || v === null || v === undefined) return;
    if (typeof v === 'string') parts.push(v);
    else if (typeof v === 'number' || typeof v === 'boolean') parts.push(String(v));
    else if (Array.isArray(v)) v.forEach((item) => walk(item, depth + 1));
    else if (typeof v === 'object') Object.values(v).forEach((item) => walk(item, depth + 1));
  };
  walk(value, 0);
  return parts.join('\n');
}

function tokens(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/**
 * Word-set overlap of the candidate with the expected text (Dice coefficient, 0–1): shared
 * distinct words × 2 ÷ (distinct words of both). Case and punctuation are ignored.
 */
export function similarity(candidate: string, expected: string): number {
  const a = tokens(candidate);
  const b = tokens(expected);
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const word of b) if (a.has(word)) shared += 1;
  return (2 * shared) / (a.size + b.size);
}

/** Fraction (0–1) of the workflow's declared non-optional outputs present in the final output. */
export function outputCompleteness(context: RunContext): number {
  const output = context.record.final_output ?? {};
  const required = context.workflow.outputNames.filter(
    (name) => !context.workflow.optionalOutputs.includes(name),
  );
  if (required.length === 0) return Object.values(output).some(present) ? 1 : 0;
  return required.filter((name) => present(output[name])).length / required.length;
}

/** Measures one computed criterion (not `judge`). */
export function measure(metric: RubricCriterion['metric'], context: RunContext): Measurement {
  const { record } = context;
  switch (metric) {
    case 'status_success':
      return { value: record.status === 'success' ? 1 : 0, detail: `status ${record.status}` };
    case 'step_success_rate':
      return {
        value: record.success_rate / 100,
        detail: `${record.success_rate}% of steps succeeded`,
      };
    case 'retries': {
      const retries = record.steps.reduce((total, step) => total + step.retry_count, 0);
      return { value: retries, detail: `${retries} retries` };
    }
    case 'duration_ms':
      return record.total_duration_ms === null
        ? { value: null, detail: 'no duration recorded' }
        : { value: record.total_duration_ms, detail: `${record.total_duration_ms} ms` };
    case 'output_completeness': {
      const value = outputCompleteness(context);
      return { value, detail: `${Math.round(value * 100)}% of declared outputs present` };
    }
    case 'expected_similarity': {
      if (context.expected === undefined)
        return { value: null, detail: 'the sample has no expected output' };
      const value = similarity(candidateText(record.final_output), context.expected);
      return { value, detail: 'word overlap with the expected output (Dice)' };
    }
    case 'judge':
      return { value: null, detail: 'rated by the judge' };
    default: {
      const never: never = metric;
      throw new Error(`unknown metric ${String(never)}`);
    }
  }
}

/**
 * The hard gates: declared non-optional outputs all present; run status success; no critical
 * step failed (steps marked `critical: true`, or every step when none is).
 */
export function hardGates(context: RunContext): Record<string, boolean> {
  const { record } = context;
  const steps = context.workflow.document.steps as readonly { name: string; critical?: boolean }[];
  const marked = steps.filter((step) => step.critical === true).map((step) => step.name);
  const critical = marked.length > 0 ? new Set(marked) : undefined;
  return {
    [HARD_GATES.REQUIRED_OUTPUTS_PRESENT]: outputCompleteness(context) === 1,
    [HARD_GATES.OVERALL_STATUS_SUCCESS]: record.status === 'success',
    [HARD_GATES.NO_CRITICAL_STEP_FAILURES]: !record.steps.some(
      (step) =>
        step.status === STEP_STATUS.FAILED &&
        (critical === undefined || critical.has(step.step_name)),
    ),
  };
}
