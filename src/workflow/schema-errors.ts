/**
 * JSON Schema validation of a workflow document, with ajv's errors translated into the
 * spec's `{loc, msg, type}` entries in plain words (no ajv jargon).
 */
import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../errors.js';
// Precompiled from schemas/workflow.schema.json by `npm run gen` (scripts/validators.ts), verbose.
import { validate as validateSchema } from '../generated/validators/workflow.js';
import { agentNameProblem } from './agent-names.js';
import { describeValue, showValue, typeLabel } from './input-types.js';

type Loc = (string | number)[];

/** JSON pointer → loc, with array positions as numbers (found by walking the document). */
function pointerToLoc(doc: unknown, pointer: string): Loc {
  if (pointer === '') return [];
  const loc: Loc = [];
  let node: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      const index = Number(key);
      loc.push(index);
      node = node[index];
    } else {
      loc.push(key);
      node =
        typeof node === 'object' && node !== null
          ? (node as Record<string, unknown>)[key]
          : undefined;
    }
  }
  return loc;
}

function fieldName(loc: Loc): string {
  const last = loc[loc.length - 1];
  if (last === undefined) return 'the workflow';
  if (loc.length === 2 && (loc[0] === 'inputs' || loc[0] === 'outputs')) {
    return `${loc[0] === 'inputs' ? 'input' : 'output'} '${String(last)}'`;
  }
  if (typeof last === 'number') return `${String(loc[loc.length - 2] ?? 'item')}[${last}]`;
  return last;
}

function typeMessage(loc: Loc, expected: string | string[], data: unknown): string {
  const field = fieldName(loc);
  if (loc.length === 0)
    return `a workflow must be a YAML mapping with name and steps, not ${describeValue(data)}`;
  if (loc[loc.length - 1] === 'depends_on' && typeof data === 'string') {
    return `depends_on must be a list of step names (e.g. [${data}]), not a string`;
  }
  const wanted = (Array.isArray(expected) ? expected : [expected]).map(typeLabel).join(' or ');
  return `${field} must be ${wanted}, not ${describeValue(data)}`;
}

function patternMessage(loc: Loc, data: unknown): string {
  const value = typeof data === 'string' ? data : String(data);
  const last = loc[loc.length - 1];
  if (loc.length === 1 && last === 'name') {
    return `workflow name '${value}' may contain only letters, digits, '_', '.' and '-'`;
  }
  if (loc[0] === 'steps' && last === 'agent')
    return agentNameProblem(value) ?? `invalid agent '${value}'`;
  if (loc[0] === 'steps' && last === 'name') {
    return `step name '${value}' may contain only letters, digits, '_' and '-'`;
  }
  if (loc[0] === 'steps' && last === 'model') {
    return `model '${value}' is not a model id: write provider:model (openai:gpt-4.1-mini) or a model name a configured provider lists (gpt-4o-mini)`;
  }
  if (loc[0] === 'steps' && loc[2] === 'outputs') {
    return `context variable name '${value}' may contain only letters, digits, '_' and '-'`;
  }
  return `'${value}' has an invalid form`;
}

function translate(doc: unknown, error: ErrorObject): ErrorDetail | undefined {
  // A propertyNames failure is reported twice (the inner keyword and propertyNames); keep one.
  if ('propertyName' in error) return undefined;
  const loc = pointerToLoc(doc, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const parent = error.parentSchema as { properties?: object } | undefined;
      const allowed = Object.keys(parent?.properties ?? {});
      const hint = allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : '';
      return { loc: [...loc, key], msg: `unknown key '${key}'${hint}`, type: 'extra_forbidden' };
    }
    case 'required': {
      const key = String(params.missingProperty);
      return { loc: [...loc, key], msg: `${key} is required`, type: 'missing' };
    }
    case 'type':
      return {
        loc,
        msg: typeMessage(loc, params.type as string | string[], error.data),
        type: 'type_error',
      };
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => showValue(v)).join(', ');
      return {
        loc,
        msg: `${fieldName(loc)} must be one of ${allowed}, not ${showValue(error.data)}`,
        type: 'value_error.enum',
      };
    }
    case 'pattern':
      return { loc, msg: patternMessage(loc, error.data), type: 'value_error.pattern' };
    case 'propertyNames': {
      const key = String(params.propertyName);
      return {
        loc: [...loc, key],
        msg: `'${key}' is not a valid name: use letters, digits, '_' and '-'`,
        type: 'value_error.key',
      };
    }
    case 'minItems':
      return {
        loc,
        msg:
          loc.length === 1 && loc[0] === 'steps'
            ? 'a workflow needs at least one step'
            : `${fieldName(loc)} must not be empty`,
        type: 'value_error.list',
      };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return {
        loc,
        msg: `${fieldName(loc)} must be ${String(params.comparison)} ${String(params.limit)}, not ${showValue(error.data)}`,
        type: 'value_error.number',
      };
    case 'minLength':
      return { loc, msg: `${fieldName(loc)} must not be empty`, type: 'value_error.string' };
    case 'maxLength':
      return {
        loc,
        msg: `${fieldName(loc)} must be at most ${String(params.limit)} characters`,
        type: 'value_error.string',
      };
    default:
      return {
        loc,
        msg: `${fieldName(loc)}: ${error.message ?? 'invalid'}`,
        type: `value_error.${error.keyword}`,
      };
  }
}

/** Schema errors of a workflow document (empty when it conforms). */
export function schemaErrors(doc: unknown): ErrorDetail[] {
  if (validateSchema(doc)) return [];
  const details: ErrorDetail[] = [];
  for (const error of validateSchema.errors ?? []) {
    const detail = translate(doc, error);
    if (detail !== undefined) details.push(detail);
  }
  return details;
}
