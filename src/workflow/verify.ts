/**
 * A step's `verify:` block (issue 13 point 5, the spec's VerificationPolicy): criteria over the
 * step's outputs (conditions, like `loop_until`, that see the step's own output as
 * `steps.<self>.outputs`) and/or a JSON Schema the outputs must match, with the policy of
 * corrections. Checked at load (`checkVerify`), compiled once (`compileVerify`).
 */
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import type { ErrorDetail } from '../errors.js';
import { compileCondition } from './expressions.js';
import type { EvalScope } from './types.js';
import { isPlainObject, isTruthy } from './values.js';

/** The `verify:` block as written. */
export interface VerifyDocument {
  /** Criterion name → condition (or a YAML boolean). */
  criteria?: Record<string, string | boolean>;
  /** Criteria whose failure stops corrections when `halt_on_critical` is set. */
  critical?: string[];
  /** JSON Schema (draft 2020-12) of the step's outputs; checked as the criterion `schema`. */
  schema?: Record<string, unknown>;
  max_correction_attempts?: number;
  require_all_criteria?: boolean;
  halt_on_critical?: boolean;
  timeout_seconds?: number | null;
}

/** Default of `max_correction_attempts` (spec, VerificationPolicy). */
export const DEFAULT_MAX_CORRECTIONS = 3;

/** The name `schema` checks appear under in `criteria_results`. */
export const SCHEMA_CRITERION = 'schema';

export interface CompiledCriterion {
  name: string;
  critical: boolean;
  /** Returns why the output fails, or undefined when it passes. */
  check(scope: EvalScope, output: Record<string, unknown>): string | undefined;
}

/** A compiled VerificationPolicy with its criteria. */
export interface CompiledVerify {
  criteria: readonly CompiledCriterion[];
  maxCorrections: number;
  requireAll: boolean;
  haltOnCritical: boolean;
  timeoutSeconds: number | undefined;
}

let ajv: Ajv2020 | undefined;

/**
 * A workflow's own schema is compiled when a workflow with one is loaded. ajv's compiler is
 * required then, synchronously, not at start-up: loading it cost every process about 0.1 s
 * (issue 25), and the shipped workflows have no `verify.schema`.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  if (ajv === undefined) {
    const require = createRequire(import.meta.url);
    const { Ajv2020: AjvClass } = require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
    ajv = new AjvClass({ allErrors: true, strict: false });
  }
  return ajv.compile(schema);
}

/** Load-time checks the JSON Schema of `workflow.schema.json` cannot make. */
export function checkVerify(
  verify: unknown,
  loc: (string | number)[],
  errors: ErrorDetail[],
  checkCondition: (text: unknown, loc: (string | number)[]) => void,
): void {
  if (!isPlainObject(verify)) return;
  const names = isPlainObject(verify.criteria) ? Object.keys(verify.criteria) : [];
  if (isPlainObject(verify.criteria)) {
    for (const [name, text] of Object.entries(verify.criteria)) {
      checkCondition(text, [...loc, 'criteria', name]);
    }
  }
  if (names.includes(SCHEMA_CRITERION) && verify.schema !== undefined) {
    errors.push({
      loc: [...loc, 'criteria', SCHEMA_CRITERION],
      msg: `criterion name '${SCHEMA_CRITERION}' is taken by verify.schema`,
      type: 'value_error.verify',
    });
  }
  if (Array.isArray(verify.critical)) {
    const known = verify.schema === undefined ? names : [...names, SCHEMA_CRITERION];
    verify.critical.forEach((name: unknown, i) => {
      if (typeof name === 'string' && !known.includes(name)) {
        errors.push({
          loc: [...loc, 'critical', i],
          msg: `unknown criterion '${name}' (known: ${known.join(', ') || 'none'})`,
          type: 'value_error.verify',
        });
      }
    });
  }
  if (isPlainObject(verify.schema)) {
    try {
      compileSchema(verify.schema);
    } catch (error) {
      errors.push({
        loc: [...loc, 'schema'],
        msg: `invalid JSON Schema: ${error instanceof Error ? error.message : 'cannot be compiled'}`,
        type: 'value_error.verify',
      });
    }
  }
}

/** Compiles a checked `verify:` block. */
export function compileVerify(verify: VerifyDocument): CompiledVerify {
  const critical = new Set(verify.critical ?? []);
  const criteria: CompiledCriterion[] = Object.entries(verify.criteria ?? {}).map(
    ([name, text]) => {
      const condition = compileCondition(text);
      return {
        name,
        critical: critical.has(name),
        check: (scope) => {
          try {
            return isTruthy(condition(scope)) ? undefined : `criterion ${name} is false`;
          } catch (error) {
            return `criterion ${name} failed: ${error instanceof Error ? error.message : 'error'}`;
          }
        },
      };
    },
  );
  if (verify.schema !== undefined) {
    const validate = compileSchema(verify.schema);
    criteria.push({
      name: SCHEMA_CRITERION,
      critical: critical.has(SCHEMA_CRITERION),
      check: (_scope, output) => {
        if (validate(output)) return undefined;
        const problems = (validate.errors ?? [])
          .map((error) => `${error.instancePath || '(outputs)'} ${error.message ?? 'invalid'}`)
          .join('; ');
        return `outputs do not match verify.schema: ${problems}`;
      },
    });
  }
  return {
    criteria,
    maxCorrections: verify.max_correction_attempts ?? DEFAULT_MAX_CORRECTIONS,
    requireAll: verify.require_all_criteria ?? true,
    haltOnCritical: verify.halt_on_critical ?? false,
    timeoutSeconds: verify.timeout_seconds ?? undefined,
  };
}
