/**
 * Run inputs checked against a workflow's `inputs` before a run starts: defaults applied, form
 * strings converted for integer, number and boolean inputs ({@link coerceInput}), then strict
 * types, enum and required. Every way a run starts (HTTP, CLI, embedding API) goes through here.
 *
 * Keys the workflow does not declare are errors when it declares any input (a typo would
 * otherwise run with the defaults); a workflow without declared inputs receives whatever it is
 * given (it may read `inputs.X` without declaring X, as workflows of the Python service did).
 * A `null` value counts as absent: the default applies, or `required` reports it missing. So
 * does a blank string (`""`, or white space only) for an input whose type is not `string`: a
 * form sends its cleared number or checkbox fields that way.
 */
import { ERROR_CODES, ValidationError, type ErrorDetail } from '../errors.js';
import {
  coerceInput,
  describeValue,
  matchesInputType,
  showValue,
  typeLabel,
} from './input-types.js';
import type { CompiledWorkflow, InputType } from './types.js';
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
  const declared = Object.keys(workflow.inputs);
  if (declared.length > 0) {
    for (const name of Object.keys(source)) {
      if (Object.hasOwn(workflow.inputs, name)) continue;
      errors.push({
        loc: [...locPrefix, name],
        msg: `unknown input '${name}'; ${workflow.name} takes ${declared.join(', ')}`,
        type: 'extra_forbidden',
      });
    }
  }
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const loc = [...locPrefix, name];
    const raw = Object.hasOwn(source, name) ? source[name] : undefined;
    if (raw === undefined || raw === null || blankFormField(raw, spec.type)) {
      if (raw !== undefined && raw !== null) delete resolved[name];
      if (spec.default !== undefined && spec.default !== null) {
        resolved[name] = structuredClone(spec.default);
      } else if (spec.required === true) {
        errors.push({ loc, msg: `input '${name}' is required`, type: 'missing' });
      }
      continue;
    }
    const given = coerceInput(raw, spec.type);
    resolved[name] = given;
    if (!matchesInputType(given, spec.type)) {
      const what = typeof given === 'string' ? showValue(given) : describeValue(given);
      errors.push({
        loc,
        msg: `input '${name}' must be ${typeLabel(spec.type)}, not ${what}`,
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

/**
 * The problems {@link resolveRunInputs} would refuse `input` for (empty when it would accept
 * it): what a preview reports before a run is asked for.
 */
export function runInputErrors(
  workflow: CompiledWorkflow,
  input: unknown,
  locPrefix: (string | number)[] = ['input_data'],
): ErrorDetail[] {
  try {
    resolveRunInputs(workflow, input, locPrefix);
    return [];
  } catch (error) {
    if (error instanceof ValidationError) return error.details;
    throw error;
  }
}

/** A form field left empty: a blank string for an input that is not a string. */
function blankFormField(value: unknown, type: InputType): boolean {
  return type !== 'string' && typeof value === 'string' && value.trim() === '';
}
