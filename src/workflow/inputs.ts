/**
 * Run inputs checked against a workflow's `inputs` before a run starts: defaults applied,
 * strict types (no coercion), enum, required. Keys the workflow does not declare pass through
 * unchanged (the Python service this replaces accepted them, and dataset-driven runs rely on
 * it). A `null` value counts as absent: the default applies, or `required` reports it missing.
 */
import { ERROR_CODES, ValidationError, type ErrorDetail } from '../errors.js';
import { describeValue, matchesInputType, showValue, typeLabel } from './input-types.js';
import type { CompiledWorkflow } from './types.js';
import { isPlainObject, valuesEqual } from './values.js';

/**
 * Returns the run's inputs (a new object). Throws {@link ValidationError} (code
 * `input_invalid`, 422) listing every problem, each `loc` starting with `locPrefix`.
 */
export function resolveRunInputs(
  workflow: CompiledWorkflow,
  input: unknown,
  locPrefix: (string | number)[] = ['input_data'],
): Record<string, unknown> {
  const source = input ?? {};
  if (!isPlainObject(source)) {
    const msg = `inputs must be a mapping of input names to values, not ${describeValue(source)}`;
    throw new ValidationError(
      msg,
      [{ loc: [...locPrefix], msg, type: 'type_error' }],
      ERROR_CODES.INPUT_INVALID,
    );
  }
  const resolved: Record<string, unknown> = Object.fromEntries(Object.entries(source));
  const errors: ErrorDetail[] = [];
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const loc = [...locPrefix, name];
    const given = Object.hasOwn(source, name) ? source[name] : undefined;
    if (given === undefined || given === null) {
      if (spec.default !== undefined && spec.default !== null) {
        resolved[name] = structuredClone(spec.default);
      } else if (spec.required === true) {
        errors.push({ loc, msg: `input '${name}' is required`, type: 'missing' });
      }
      continue;
    }
    if (!matchesInputType(given, spec.type)) {
      errors.push({
        loc,
        msg: `input '${name}' must be ${typeLabel(spec.type)}, not ${describeValue(given)}`,
        type: 'type_error',
      });
    } else if (spec.enum !== undefined && !spec.enum.some((option) => valuesEqual(option, given))) {
      errors.push({
        loc,
        msg: `input '${name}' must be one of ${spec.enum.map((o) => showValue(o)).join(', ')}, not ${showValue(given)}`,
        type: 'value_error.enum',
      });
    }
  }
  if (errors.length > 0) {
    const head =
      errors.length === 1 ? (errors[0]?.msg ?? '') : `${errors.length} problems with the inputs`;
    throw new ValidationError(`invalid inputs: ${head}`, errors, ERROR_CODES.INPUT_INVALID);
  }
  return resolved;
}
