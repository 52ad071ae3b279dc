import { expect } from 'chai';
import fc from 'fast-check';
import {
  ExpressionError,
  compileCondition,
  compileExpression,
  compileTemplate,
} from '../../../src/workflow/expressions.js';
import type { EvalScope } from '../../../src/workflow/types.js';

/** Fragments that make random strings look like expressions more often than pure noise. */
const fragment = fc.constantFrom(
  'inputs',
  'steps',
  'context',
  '.',
  'a',
  'outputs',
  'status',
  '[',
  ']',
  '(',
  ')',
  ',',
  '0',
  '-1',
  '1.5',
  '"s"',
  "'t'",
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  ' and ',
  ' or ',
  'not ',
  ' in ',
  'true',
  'null',
  'coalesce',
  ' ',
  '${',
  '}',
  '$${',
  '\\',
  'constructor',
  '__proto__',
  'prototype',
);
const expressionLike = fc.oneof(
  fc.string(),
  fc.array(fragment, { maxLength: 20 }).map((parts) => parts.join('')),
);

const json = fc.jsonValue({ maxDepth: 2 });
const scopeArb: fc.Arbitrary<EvalScope> = fc.record({
  inputs: fc.dictionary(fc.constantFrom('a', 'b', '__proto__', 'constructor'), json),
  steps: fc.dictionary(
    fc.constantFrom('a', 'b'),
    fc.record({
      status: fc.constantFrom('success', 'failed', 'skipped', 'pending'),
      outputs: fc.option(fc.dictionary(fc.constantFrom('a', 'x', 'outputs'), json), { nil: null }),
    }),
  ),
  context: fc.dictionary(fc.constantFrom('a', 'v'), json),
});

/** Compiles, or returns undefined when the only failure is an ExpressionError. */
function tryCompile<T>(compile: () => T): T | undefined {
  try {
    return compile();
  } catch (error) {
    if (error instanceof ExpressionError) return undefined;
    throw error;
  }
}

describe('expression language (properties)', () => {
  it('compiles an arbitrary string or throws only ExpressionError', () => {
    fc.assert(
      fc.property(expressionLike, (text) => {
        tryCompile(() => compileExpression(text));
        tryCompile(() => compileTemplate(text));
        tryCompile(() => compileCondition(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('evaluators never throw and never return undefined, for arbitrary scopes', () => {
    fc.assert(
      fc.property(expressionLike, scopeArb, (text, scope) => {
        for (const evaluate of [
          tryCompile(() => compileExpression(text)),
          tryCompile(() => compileTemplate(text)),
        ]) {
          if (evaluate === undefined) continue;
          expect(evaluate(scope)).to.not.equal(undefined);
        }
      }),
      { numRuns: 800 },
    );
  });

  it('well-formed comparisons always yield booleans', () => {
    const operand = fc.constantFrom(
      'inputs.a',
      'inputs.b',
      'steps.a.outputs.x',
      'steps.b.status',
      'context.v',
      '1',
      '"s"',
      'null',
      '[1, "s"]',
    );
    const op = fc.constantFrom('==', '!=', '<', '<=', '>', '>=', 'in', 'not in');
    fc.assert(
      fc.property(operand, op, operand, scopeArb, (left, operator, right, scope) => {
        expect(compileExpression(`${left} ${operator} ${right}`)(scope)).to.be.a('boolean');
      }),
      { numRuns: 800 },
    );
  });

  it('no input executes code or touches prototypes', () => {
    const attacks = [
      'constructor.constructor("return process")()',
      'inputs.constructor.constructor("return process")()',
      'inputs.__proto__.polluted',
      'inputs["__proto__"]["polluted"]',
      'inputs.a.__proto__',
      'steps.__proto__.outputs.x',
      'context["constructor"]["prototype"]',
      '${inputs.constructor.name}',
      'x ${inputs.__proto__} y',
      'this',
      'globalThis.process',
      'process.exit(1)',
      'require("fs")',
      'import("fs")',
      'inputs.a; process.exit(1)',
    ];
    const scope: EvalScope = { inputs: { a: {} }, steps: {}, context: {} };
    for (const text of attacks) {
      for (const compile of [compileExpression, compileTemplate, compileCondition]) {
        const evaluate = tryCompile(() => compile(text));
        if (evaluate === undefined) continue;
        const value = evaluate(scope);
        expect(typeof value, text).to.not.equal('function');
        expect([null, '', 'x  y', text], text).to.deep.include(value);
      }
    }
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(Object.prototype).to.not.have.property('polluted');
  });

  it('random paths over JSON data read own data or null, never inherited members', () => {
    const segment = fc.constantFrom(
      'a',
      'b',
      '0',
      'length',
      'constructor',
      '__proto__',
      'toString',
      'valueOf',
      'hasOwnProperty',
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), json, (path, data) => {
        const value = compileExpression(`inputs.root.${path.join('.')}`)({
          inputs: { root: data },
          steps: {},
          context: {},
        });
        expect(typeof value).to.not.equal('function');
      }),
      { numRuns: 2000 },
    );
  });
});
