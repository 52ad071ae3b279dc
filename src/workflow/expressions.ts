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
 */
import { ExpressionError } from './expression-error.js';
import { Parser, type ReferenceSets } from './expression-parser.js';
import type { EvalScope, Evaluator } from './types.js';
import { frozenCopy, interpolationText, isPlainObject } from './values.js';

export { ExpressionError } from './expression-error.js';

/** Names read by an expression or template, each list sorted and without duplicates. */
export interface ExpressionReferences {
  inputs: string[];
  steps: string[];
  context: string[];
}

/** A compiled expression or template with what it reads. */
export interface AnalyzedExpression {
  evaluate: Evaluator;
  references: ExpressionReferences;
  /** True when the value does not depend on the scope. */
  constant: boolean;
}

function newRefs(): ReferenceSets {
  return { inputs: new Set(), steps: new Set(), context: new Set() };
}

function sortedRefs(refs: ReferenceSets): ExpressionReferences {
  return {
    inputs: [...refs.inputs].sort(),
    steps: [...refs.steps].sort(),
    context: [...refs.context].sort(),
  };
}

/** Wraps an evaluator so nothing escapes it: a throw (e.g. a hostile getter) reads as null. */
function guarded(evaluate: Evaluator): Evaluator {
  return (scope: EvalScope) => {
    try {
      const value = evaluate(scope);
      return value === undefined ? null : value;
    } catch {
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
      for (const part of parts)
        out += typeof part === 'string' ? part : interpolationText(part(scope));
      return out;
    },
    constant: false,
  };
}

function compileValue(
  value: unknown,
  refs: ReferenceSets,
  depth: number,
): { evaluate: Evaluator; constant: boolean } {
  if (depth > 64)
    throw new ExpressionError(0, 'at most 64 levels of nested maps and lists', 'more');
  if (typeof value === 'string') return compileString(value, refs);
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => compileValue(item, refs, depth + 1));
    if (items.every((item) => item.constant)) {
      const frozen = frozenCopy(items.map((item) => item.evaluate(EMPTY_SCOPE)));
      return { evaluate: () => frozen, constant: true };
    }
    const evaluators = items.map((item) => item.evaluate);
    return { evaluate: (scope) => evaluators.map((evaluate) => evaluate(scope)), constant: false };
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).map(
      ([key, item]) => [key, compileValue(item, refs, depth + 1)] as const,
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

/** Compiles a template value (string, list, map or scalar), reporting what it reads. */
export function analyzeTemplate(value: unknown): AnalyzedExpression {
  const refs = newRefs();
  const { evaluate, constant } = compileValue(value, refs, 0);
  return {
    evaluate: constant ? evaluate : guarded(evaluate),
    references: sortedRefs(refs),
    constant,
  };
}

/** Compiles a template value. Throws {@link ExpressionError} on a syntax error. */
export function compileTemplate(value: unknown): Evaluator {
  return analyzeTemplate(value).evaluate;
}
