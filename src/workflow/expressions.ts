/**
 * The expression language of workflows (ARCHITECTURE §5): `${...}` expressions and templates,
 * compiled once into closures. Compiling throws {@link ExpressionError} for a syntax error;
 * a compiled evaluator never throws (a missing reference, or anything unexpected in the
 * scope, reads as null).
 *
 * Templates:
 * - a string that is exactly one `${expr}` evaluates to the expression's value (type kept);
 * - `${expr}` inside a longer string interpolates: missing → '', strings as they are, numbers
 *   and booleans as text, lists and maps as JSON; `$${` writes a literal `${`;
 * - any other string, number, boolean or null is a constant;
 * - maps and lists resolve recursively into new maps and lists.
 * Values an evaluator returns may be frozen constants or references into the scope: treat them
 * as read-only.
 *
 * The text one evaluation of a template builds by interpolation is bounded
 * (`maxTemplateBytes`): past it the evaluation throws {@link TemplateSizeError}, the one error
 * a template evaluator lets through (a step whose inputs throw it fails with its message).
 */
import { ExpressionError } from './expression-error.js';
import { Parser, type ReferenceSets } from './expression-parser.js';
import type { EvalScope, Evaluator } from './types.js';
import { CONTENT_LIMIT_VARIABLES, DEFAULT_CONTENT_LIMITS } from './limits.js';
import { frozenCopy, interpolationText, isPlainObject } from './values.js';

export { ExpressionError } from './expression-error.js';

/** Names read by an expression or template, each list sorted and without duplicates. */
export interface ExpressionReferences {
  inputs: string[];
  steps: string[];
  context: string[];
  /** Names read under `item` (a map step's item); '' for `item` itself. */
  item: string[];
}

/** A compiled expression or template with what it reads. */
export interface AnalyzedExpression {
  evaluate: Evaluator;
  references: ExpressionReferences;
  /** True when the value does not depend on the scope. */
  constant: boolean;
}

function newRefs(): ReferenceSets {
  return { inputs: new Set(), steps: new Set(), context: new Set(), item: new Set() };
}

function sortedRefs(refs: ReferenceSets): ExpressionReferences {
  return {
    inputs: [...refs.inputs].sort(),
    steps: [...refs.steps].sort(),
    context: [...refs.context].sort(),
    item: [...refs.item].sort(),
  };
}

/**
 * An evaluation that hit a resource limit: it is an error (the step fails with its message),
 * never a silent null.
 */
export class EvaluationLimitError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EvaluationLimitError';
  }
}

/** A template evaluation built more text than `maxTemplateBytes`. */
export class TemplateSizeError extends EvaluationLimitError {
  constructor(readonly maxBytes: number) {
    super(
      `rendered template exceeds ${maxBytes} bytes (${CONTENT_LIMIT_VARIABLES.maxTemplateBytes})`,
    );
    this.name = 'TemplateSizeError';
  }
}

/** Text interpolated so far in the current evaluation of one compiled template. */
interface Budget {
  used: number;
  readonly max: number;
}

/**
 * Wraps an evaluator so that only an {@link EvaluationLimitError} escapes it: a stack overflow
 * or a string too long for the engine (comparing or interpolating data nested 100 000 deep) is
 * one; any other throw (e.g. a hostile getter) reads as null.
 */
function guarded(evaluate: Evaluator): Evaluator {
  return (scope: EvalScope) => {
    try {
      const value = evaluate(scope);
      return value === undefined ? null : value;
    } catch (error) {
      if (error instanceof EvaluationLimitError) throw error;
      if (error instanceof RangeError) {
        throw new EvaluationLimitError(`expression evaluation failed: ${error.message}`, {
          cause: error,
        });
      }
      return null;
    }
  };
}

function parseWhole(text: string, refs: ReferenceSets): { evaluate: Evaluator; constant: boolean } {
  const parser = new Parser(text, 0, refs);
  const result = parser.parse();
  parser.expectEnd('end');
  return { evaluate: result.evaluate, constant: result.constant !== undefined };
}

/** Compiles the inside of `${...}`, reporting what it reads. */
export function analyzeExpression(text: string): AnalyzedExpression {
  const refs = newRefs();
  const { evaluate, constant } = parseWhole(text, refs);
  return { evaluate: guarded(evaluate), references: sortedRefs(refs), constant };
}

/**
 * Compiles a condition (`when`, `loop_until`; ARCHITECTURE §5). Three forms, one grammar:
 * - a bare expression: `inputs.depth == 'quick'`;
 * - one `${...}` around the whole condition: `${inputs.n > 5}`;
 * - placeholders inside a larger condition, as the Python service wrote them:
 *   `${inputs.mode} == 'quick'`, `${steps.a.outputs.n} > 3 and ${inputs.deep}`. Each `${...}`
 *   is a value in the expression (like parentheses), never pasted text, so it keeps its type.
 * A YAML boolean is a constant condition. Throws {@link ExpressionError} on a syntax error.
 */
export function analyzeCondition(condition: string | boolean): AnalyzedExpression {
  if (typeof condition === 'boolean') {
    return { evaluate: () => condition, references: sortedRefs(newRefs()), constant: true };
  }
  const refs = newRefs();
  const parser = new Parser(condition, 0, refs, true);
  const result = parser.parse();
  parser.expectEnd('end');
  return {
    evaluate: guarded(result.evaluate),
    references: sortedRefs(refs),
    constant: result.constant !== undefined,
  };
}

/** Compiles a condition; see {@link analyzeCondition}. */
export function compileCondition(condition: string | boolean): Evaluator {
  return analyzeCondition(condition).evaluate;
}

/** Compiles the inside of `${...}`. Throws {@link ExpressionError} on a syntax error. */
export function compileExpression(text: string): Evaluator {
  return analyzeExpression(text).evaluate;
}

/** The names an expression reads. Throws {@link ExpressionError} on a syntax error. */
export function expressionReferences(text: string): ExpressionReferences {
  return analyzeExpression(text).references;
}

type Part = string | Evaluator;

/** Constant evaluators ignore the scope; this one is only used to read their value. */
const EMPTY_SCOPE: EvalScope = Object.freeze({ inputs: {}, steps: {}, context: {} });

/** Splits a template string into literal text and compiled `${...}` parts. */
function compileString(
  text: string,
  refs: ReferenceSets,
  budget: Budget,
): { evaluate: Evaluator; constant: boolean } {
  if (!text.includes('${')) return { evaluate: () => text, constant: true };
  const parts: Part[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      literal += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      literal += text.charAt(i);
      i++;
      continue;
    }
    const parser = new Parser(text, i + 2, refs);
    const result = parser.parse();
    const close = parser.expectEnd('}');
    if (i === 0 && close.end === text.length) {
      return { evaluate: result.evaluate, constant: result.constant !== undefined };
    }
    if (literal !== '') parts.push(literal);
    literal = '';
    parts.push(result.evaluate);
    i = close.end;
  }
  if (literal !== '') parts.push(literal);
  if (parts.every((part) => typeof part === 'string')) {
    const value = parts.join('');
    return { evaluate: () => value, constant: true };
  }
  return {
    evaluate: (scope) => {
      let out = '';
      for (const part of parts) {
        const piece = typeof part === 'string' ? part : interpolationText(part(scope));
        // Checked per piece: 100 copies of a 9 KB input in each of 100 steps once took the
        // process out of memory.
        budget.used += piece.length;
        if (budget.used > budget.max) throw new TemplateSizeError(budget.max);
        out += piece;
      }
      return out;
    },
    constant: false,
  };
}

function compileValue(
  value: unknown,
  refs: ReferenceSets,
  depth: number,
  budget: Budget,
): { evaluate: Evaluator; constant: boolean } {
  if (depth > 64)
    throw new ExpressionError(0, 'at most 64 levels of nested maps and lists', 'more');
  if (typeof value === 'string') return compileString(value, refs, budget);
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => compileValue(item, refs, depth + 1, budget));
    if (items.every((item) => item.constant)) {
      const frozen = frozenCopy(items.map((item) => item.evaluate(EMPTY_SCOPE)));
      return { evaluate: () => frozen, constant: true };
    }
    const evaluators = items.map((item) => item.evaluate);
    return { evaluate: (scope) => evaluators.map((evaluate) => evaluate(scope)), constant: false };
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).map(
      ([key, item]) => [key, compileValue(item, refs, depth + 1, budget)] as const,
    );
    if (entries.every(([, item]) => item.constant)) {
      const frozen = frozenCopy(
        Object.fromEntries(entries.map(([key, item]) => [key, item.evaluate(EMPTY_SCOPE)])),
      );
      return { evaluate: () => frozen, constant: true };
    }
    const keys = entries.map(([key]) => key);
    const evaluators = entries.map(([, item]) => item.evaluate);
    // Evaluated once per step start: one object, no intermediate arrays. A `__proto__` key is
    // defined as an own data property (assignment would set the prototype).
    return {
      evaluate: (scope) => {
        const out: Record<string, unknown> = {};
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!;
          const value = evaluators[i]!(scope);
          if (key === '__proto__')
            Object.defineProperty(out, key, {
              value,
              writable: true,
              enumerable: true,
              configurable: true,
            });
          else out[key] = value;
        }
        return out;
      },
      constant: false,
    };
  }
  const constantValue = value === undefined ? null : value;
  return { evaluate: () => constantValue, constant: true };
}

export interface TemplateOptions {
  /**
   * Text one evaluation may build by interpolation (UTF-16 units, one per byte of ASCII).
   * @default 1048576
   */
  maxBytes?: number;
}

/** Compiles a template value (string, list, map or scalar), reporting what it reads. */
export function analyzeTemplate(value: unknown, options: TemplateOptions = {}): AnalyzedExpression {
  const refs = newRefs();
  const budget: Budget = {
    used: 0,
    max: options.maxBytes ?? DEFAULT_CONTENT_LIMITS.maxTemplateBytes,
  };
  const { evaluate, constant } = compileValue(value, refs, 0, budget);
  if (constant) return { evaluate, references: sortedRefs(refs), constant };
  const bounded = guarded(evaluate);
  return {
    // Evaluations never nest (an evaluator calls no other template), so one budget per template.
    evaluate: (scope) => {
      budget.used = 0;
      return bounded(scope);
    },
    references: sortedRefs(refs),
    constant,
  };
}

/**
 * Compiles a template value. Throws {@link ExpressionError} on a syntax error; its evaluator
 * throws {@link TemplateSizeError} when it would build more than `maxBytes` of text.
 */
export function compileTemplate(value: unknown, options: TemplateOptions = {}): Evaluator {
  return analyzeTemplate(value, options).evaluate;
}
