/**
 * What a sample looks like to clients and workflows: its summary (ids, title, a short text, field
 * names), its expected output, and its values mapped onto a workflow's inputs.
 */
import type { InputSpec } from '../workflow/types.js';
import type { Dataset, Sample } from './dataset-files.js';

/** Characters of a sample's `summary`. */
export const SUMMARY_CHARS = 160;

export interface SampleSummary {
  sample_index: number;
  sample_id: string;
  task_id: string;
  title: string;
  summary: string;
  field_names: string[];
}

const TEXT_FIELDS = ['question', 'prompt', 'description', 'task', 'text', 'code', 'input'];

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function firstText(sample: Sample): string {
  for (const field of TEXT_FIELDS) {
    const value = text(sample[field]) ?? text((sample.inputs as Sample | undefined)?.[field]);
    if (value !== undefined) return value;
  }
  for (const value of Object.values(sample)) if (typeof value === 'string') return value;
  return '';
}

const oneLine = (s: string, max: number): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function summarizeSample(sample: Sample, index: number): SampleSummary {
  const id = text(sample.id) ?? text(sample.sample_id) ?? String(index);
  return {
    sample_index: index,
    sample_id: id,
    task_id: text(sample.task_id) ?? id,
    title: oneLine(text(sample.title) ?? firstText(sample), 80),
    summary: oneLine(firstText(sample), SUMMARY_CHARS),
    field_names: Object.keys(sample),
  };
}

/** The sample's expected output (`expected_output`, `expected`, `answer`), as text; undefined when none. */
export function expectedOutput(sample: Sample): string | undefined {
  for (const field of ['expected_output', 'expected', 'answer', 'reference']) {
    const value = sample[field];
    if (value === undefined || value === null) continue;
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  return undefined;
}

function lookup(sample: Sample, path: string): unknown {
  let value: unknown = sample;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export interface AdaptedInputs {
  compatible: boolean;
  adapted_inputs: Record<string, unknown>;
  missing_inputs: string[];
}

/**
 * Maps a sample onto a workflow's inputs: the dataset's `input_mapping[workflow]` (input →
 * sample field, dot paths allowed) first, then the sample's `inputs` object, then a top-level
 * sample field of the input's name. Required inputs without a default that stay unmapped are
 * `missing_inputs`; the sample is `compatible` when none are missing and it supplies at least
 * one input (or the workflow declares none). Pure: reads, never writes.
 */
export function adaptSample(
  dataset: Pick<Dataset, 'inputMapping'>,
  sample: Sample,
  workflow: { name: string; inputs: Readonly<Record<string, InputSpec>> },
): AdaptedInputs {
  const mapping = dataset.inputMapping[workflow.name] ?? {};
  const nested =
    typeof sample.inputs === 'object' && sample.inputs !== null ? (sample.inputs as Sample) : {};
  const adapted: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const field = mapping[name];
    const value = field !== undefined ? lookup(sample, field) : (nested[name] ?? sample[name]);
    if (value !== undefined && value !== null) adapted[name] = value;
    else if (spec.required === true && spec.default === undefined) missing.push(name);
  }
  const declared = Object.keys(workflow.inputs).length;
  return {
    compatible: missing.length === 0 && (declared === 0 || Object.keys(adapted).length > 0),
    adapted_inputs: adapted,
    missing_inputs: missing,
  };
}
