/**
 * The run-record bound (docs/limits.md): a record whose JSON would exceed `maxBytes` has its
 * biggest parts (the run inputs, the final output, step inputs, outputs and errors) replaced by
 * truncation markers, biggest first, until it fits. Every truncation, this one and those made
 * earlier to step inputs and outputs, is listed in `extra.warnings`: nothing is dropped silently.
 */
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { CONTENT_LIMIT_VARIABLES } from '../workflow/limits.js';
import {
  PREVIEW_CHARS,
  isTruncationMarker,
  jsonSize,
  truncatedKeys,
  truncationMarker,
  truncationReason,
} from '../workflow/size-bounds.js';

/** A record within its bound and what was truncated to get there (empty: nothing). */
export interface BoundedRunRecord {
  record: RunRecord;
  warnings: string[];
}

interface Part {
  label: string;
  size: number;
  replace: () => void;
}

/**
 * Lists the truncations `value` carries, under the label `steps.<step>.<part>` (or `part` alone
 * when `step` is undefined), made only when there is one: every run record's steps are checked,
 * and they almost never have any.
 */
function ioWarnings(
  step: string | undefined,
  part: string,
  value: unknown,
  warnings: string[],
): void {
  if (typeof value !== 'object' || value === null) return;
  const why = truncationReason(value);
  const marker = isTruncationMarker(value);
  const keys = marker ? undefined : truncatedKeys(value);
  if (!marker && keys === undefined) return;
  const label = step === undefined ? part : `steps.${step}.${part}`;
  // A truncation by another bound than the step I/O bound (the run's byte budget) says which.
  if (marker) {
    // The workflow outputs' marker carries why they could not be rendered.
    const reason = (value as Record<string, unknown>).error;
    warnings.push(
      typeof reason === 'string'
        ? `${label}: ${reason}`
        : why !== undefined
          ? `${label} truncated: ${why}`
          : `${label} truncated (${CONTENT_LIMIT_VARIABLES.maxStepIoBytes})`,
    );
    return;
  }
  if (keys !== undefined) {
    warnings.push(
      why !== undefined
        ? `${label} entries ${keys.join(', ')} truncated: ${why}`
        : `${label} entries ${keys.join(', ')} truncated (${CONTENT_LIMIT_VARIABLES.maxStepIoBytes})`,
    );
  }
}

function truncatedText(text: string): string {
  return `${text.slice(0, PREVIEW_CHARS)}… [truncated: ${text.length} characters]`;
}

/**
 * The fixed fields of a step record as compact JSON, generously: key names, statuses, numbers,
 * two ISO times, attempts and iterations (about 300 bytes).
 */
const STEP_FIXED_BYTES = 400;
/** The same for the run record's own fields (ids, times, counts, key names). */
const RUN_FIXED_BYTES = 1024;

/**
 * An upper estimate of the record's JSON size (above `maxBytes` once past it). Only the parts
 * that can be large are measured: walking every field of every step cost ~0.7 µs per step on
 * a 1000-step run, most of a no-op step's cost; this costs a fraction of it.
 */
function estimatedSize(record: RunRecord, maxBytes: number): number {
  let size =
    RUN_FIXED_BYTES +
    record.run_id.length +
    record.workflow_name.length +
    (record.error?.length ?? 0) +
    jsonSize(record.inputs, maxBytes) +
    jsonSize(record.final_output, maxBytes) +
    jsonSize(record.extra, maxBytes);
  for (const step of record.steps) {
    if (size > maxBytes) return size;
    size +=
      STEP_FIXED_BYTES +
      step.step_name.length +
      step.agent.length +
      (step.model_used?.length ?? 0) +
      (step.error?.length ?? 0) +
      (step.metadata.skip_reason?.length ?? 0) +
      jsonSize(step.input, maxBytes) +
      jsonSize(step.output, maxBytes);
  }
  return size;
}

/** `record` within `maxBytes` (see the module comment); the same record when nothing changed. */
export function boundRunRecord(record: RunRecord, maxBytes: number): BoundedRunRecord {
  const warnings: string[] = [];
  for (const step of record.steps) {
    ioWarnings(step.step_name, 'input', step.input, warnings);
    ioWarnings(step.step_name, 'output', step.output, warnings);
  }
  ioWarnings(undefined, 'final_output', record.final_output, warnings);
  let bounded = record;
  if (estimatedSize(record, maxBytes) > maxBytes) {
    const steps: StepRecord[] = record.steps.map((step) => ({ ...step }));
    bounded = { ...record, steps };
    const cap = maxBytes * 16;
    const variable = CONTENT_LIMIT_VARIABLES.maxRunRecordBytes;
    const parts: Part[] = [
      {
        label: 'inputs',
        size: jsonSize(record.inputs, cap),
        replace: () => (bounded.inputs = truncationMarker(record.inputs, maxBytes)),
      },
      {
        label: 'final_output',
        size: jsonSize(record.final_output, cap),
        replace: () => (bounded.final_output = truncationMarker(record.final_output, maxBytes)),
      },
    ];
    for (const step of steps) {
      const name = `steps.${step.step_name}`;
      const { input, output, error } = step;
      parts.push(
        {
          label: `${name}.input`,
          size: jsonSize(input, cap),
          replace: () => (step.input = truncationMarker(input, maxBytes)),
        },
        {
          label: `${name}.output`,
          size: jsonSize(output, cap),
          replace: () => (step.output = truncationMarker(output, maxBytes)),
        },
        {
          label: `${name}.error`,
          size: error === null ? 0 : error.length,
          replace: () => (step.error = error === null ? null : truncatedText(error)),
        },
      );
    }
    const sorted = parts.sort((x, y) => y.size - x.size);
    let total = estimatedSize(bounded, cap);
    for (let next = 0; total > maxBytes && next < sorted.length; next++) {
      const part = sorted[next]!;
      if (part.size <= PREVIEW_CHARS * 2) break;
      part.replace();
      total -= part.size - PREVIEW_CHARS * 2;
      warnings.push(
        `${part.label} truncated: the run record exceeded ${maxBytes} bytes (${variable})`,
      );
      // Sizes are counted up to `cap`: measure again before believing the record fits.
      if (total <= maxBytes) total = estimatedSize(bounded, cap);
    }
    if (estimatedSize(bounded, maxBytes) > maxBytes) {
      warnings.push(`the run record still exceeds ${maxBytes} bytes (${variable}): too many steps`);
    }
  }
  if (warnings.length === 0) return { record, warnings };
  return { record: { ...bounded, extra: { ...bounded.extra, warnings } }, warnings };
}
