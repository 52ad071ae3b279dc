import { expect } from 'chai';
import {
  ExpressionError,
  compileCondition,
  compileExpression,
  compileTemplate,
  expressionReferences,
} from '../../../src/workflow/expressions.js';
import type { EvalScope } from '../../../src/workflow/types.js';

const scope: EvalScope = {
  inputs: {
    n: 3,
    s: 'hello world',
    list: [1, 2, 3],
    obj: { a: { b: [10, 20] } },
    flag: true,
    empty: '',
  },
  steps: {
    done: { status: 'success', outputs: { text: 'ok', count: 2, items: ['x', 'y'] } },
    skipped: { status: 'skipped', outputs: null },
  },
  context: { var: 'ctx' },
};

const run = (text: string): unknown => compileExpression(text)(scope);

describe('compileExpression', () => {
  describe('paths', () => {
    it('reads inputs, step outputs, step status and context', () => {
      expect(run('inputs.n')).to.equal(3);
      expect(run('steps.done.outputs.text')).to.equal('ok');
      expect(run('steps.done.status')).to.equal('success');
      expect(run('context.var')).to.equal('ctx');
    });

    it('reads deeper paths with dots and [index]', () => {
      expect(run('inputs.obj.a.b[1]')).to.equal(20);
      expect(run('inputs.obj["a"].b.0')).to.equal(10);
      expect(run('inputs.list[-1]')).to.equal(3);
      expect(run('steps.done.outputs.items[0]')).to.equal('x');
    });

    it('reads a missing reference as null', () => {
      expect(run('inputs.nope')).to.equal(null);
      expect(run('inputs.nope.deeper[3]')).to.equal(null);
      expect(run('steps.skipped.outputs.text')).to.equal(null);
      expect(run('steps.unknown.outputs.text')).to.equal(null);
      expect(run('steps.unknown.status')).to.equal(null);
      expect(run('inputs.list[7]')).to.equal(null);
      expect(run('inputs.s.length')).to.equal(null);
    });

    it('does not read inherited properties', () => {
      expect(run('inputs.constructor')).to.equal(null);
      expect(run('inputs.__proto__')).to.equal(null);
      expect(run('inputs.obj.toString')).to.equal(null);
      expect(run('inputs.list.map')).to.equal(null);
    });
  });

  describe('literals', () => {
    it('reads strings, numbers, booleans, null and lists', () => {
      expect(run('"a\\"b"')).to.equal('a"b');
      expect(run("'it\\'s'")).to.equal("it's");
      expect(run('-1.5e2')).to.equal(-150);
      expect(run('true')).to.equal(true);
      expect(run('false')).to.equal(false);
      expect(run('null')).to.equal(null);
      expect(run('[1, "two", inputs.n, []]')).to.deep.equal([1, 'two', 3, []]);
    });
  });

  describe('operators', () => {
    it('== and != compare deeply, without coercion', () => {
      expect(run('inputs.n == 3')).to.equal(true);
      expect(run('inputs.n == "3"')).to.equal(false);
      expect(run('inputs.list == [1, 2, 3]')).to.equal(true);
      expect(run('inputs.n != 4')).to.equal(true);
      expect(run('inputs.n != 3')).to.equal(false);
    });

    it('orders numbers with numbers and strings with strings', () => {
      expect(run('inputs.n < 4')).to.equal(true);
      expect(run('inputs.n <= 3')).to.equal(true);
      expect(run('inputs.n > 3')).to.equal(false);
      expect(run('inputs.n >= 3')).to.equal(true);
      expect(run('"abc" < "abd"')).to.equal(true);
      expect(run('inputs.n < "4"')).to.equal(false);
      expect(run('inputs.n >= "1"')).to.equal(false);
    });

    it('in and not in look into lists, strings and map keys', () => {
      expect(run('2 in inputs.list')).to.equal(true);
      expect(run('5 in inputs.list')).to.equal(false);
      expect(run('5 not in inputs.list')).to.equal(true);
      expect(run('"world" in inputs.s')).to.equal(true);
      expect(run('"a" in inputs.obj')).to.equal(true);
      expect(run('"z" not in inputs.obj')).to.equal(true);
    });

    it('and, or, not use truthiness and return booleans', () => {
      expect(run('inputs.flag and inputs.n')).to.equal(true);
      expect(run('inputs.empty or inputs.nope')).to.equal(false);
      expect(run('not inputs.empty')).to.equal(true);
      expect(run('not []')).to.equal(true);
      expect(run('not not inputs.list')).to.equal(true);
    });

    it('binds not, and, or in that order and honours parentheses', () => {
      expect(run('true or false and false')).to.equal(true);
      expect(run('(true or false) and false')).to.equal(false);
      expect(run('not false and false')).to.equal(false);
      expect(run('not 2 in inputs.list')).to.equal(false);
    });
  });

  describe('null semantics', () => {
    it('== with a missing value is false unless both are missing', () => {
      expect(run('inputs.nope == 1')).to.equal(false);
      expect(run('inputs.nope == ""')).to.equal(false);
      expect(run('inputs.nope == null')).to.equal(true);
      expect(run('inputs.nope == steps.skipped.outputs.x')).to.equal(true);
    });

    it('!= and not in with a missing value are true', () => {
      expect(run('inputs.nope != 1')).to.equal(true);
      expect(run('1 not in inputs.nope')).to.equal(true);
      expect(run('1 in inputs.nope')).to.equal(false);
    });

    it('ordering with a missing value is false both ways', () => {
      for (const op of ['<', '<=', '>', '>=']) {
        expect(run(`inputs.nope ${op} 1`), op).to.equal(false);
        expect(run(`1 ${op} inputs.nope`), op).to.equal(false);
      }
    });
  });

  describe('coalesce', () => {
    it('returns the first non-null argument, or null', () => {
      expect(run('coalesce(steps.skipped.outputs.text, steps.done.outputs.text)')).to.equal('ok');
      expect(run('coalesce(inputs.nope, inputs.empty, 1)')).to.equal('');
      expect(run('coalesce(inputs.nope)')).to.equal(null);
      expect(run('coalesce(inputs.nope, false)')).to.equal(false);
    });
  });

  describe('syntax errors', () => {
    const cases: [string, number, RegExp][] = [
      ['inputs.n ==', 11, /expected a value/],
      ['(inputs.n', 9, /expected '\)'/],
      ['inputs.n = 1', 9, /'==' compares/],
      ['inputs.n && true', 9, /use and\/or/],
      ['foo.bar', 0, /inputs/],
      ['eval("x")', 0, /only coalesce/],
      ['steps.a', 0, /steps\.a\.outputs/],
      ['steps.a.result', 0, /steps\.a\.outputs/],
      ['steps.a.status.x', 0, /nothing after \.status/],
      ['"open', 0, /closing "/],
      ['[1, 2', 5, /',' or '\]'/],
      ['inputs.n 1', 9, /end of the expression/],
      ['inputs.', 7, /a name after/],
      ['inputs[1.5]', 7, /integer index/],
      ['1 not 2', 6, /'in' after 'not'/],
      ['', 0, /expected a value/],
    ];
    for (const [text, position, message] of cases) {
      it(`rejects ${JSON.stringify(text)} at position ${position}`, () => {
        let caught: unknown;
        try {
          compileExpression(text);
        } catch (error) {
          caught = error;
        }
        expect(caught).to.be.instanceOf(ExpressionError);
        const error = caught as ExpressionError;
        expect(error.position).to.equal(position);
        expect(error.message).to.match(message);
        expect(error.message).to.contain(`position ${position}`);
      });
    }

    it('limits nesting instead of overflowing the stack', () => {
      expect(() => compileExpression('('.repeat(10_000))).to.throw(ExpressionError, /nesting/);
      expect(() => compileExpression('not '.repeat(10_000) + 'true')).to.throw(
        ExpressionError,
        /nesting/,
      );
    });
  });

  it('never throws while evaluating, even with a hostile scope', () => {
    const hostile = {
      inputs: Object.defineProperty({}, 'x', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      }),
      steps: null,
      context: 5,
    } as unknown as EvalScope;
    expect(compileExpression('inputs.x == 1')(hostile)).to.equal(null);
    expect(compileExpression('steps.a.outputs.b')(hostile)).to.equal(null);
    expect(compileExpression('context.a != 1')(hostile)).to.equal(true);
  });
});

describe('compileCondition', () => {
  it('accepts a bare expression or one ${...} around the whole condition', () => {
    expect(compileCondition('inputs.n > 2')(scope)).to.equal(true);
    expect(compileCondition('  ${inputs.n > 5}  ')(scope)).to.equal(false);
  });

  it('takes placeholders inside a larger condition as values, never as pasted text', () => {
    const cases: [string, boolean][] = [
      ['${inputs.n} > 2', true],
      ['${inputs.n} > 5', false],
      ["${inputs.s} == 'hello world'", true], // pasted text would read `hello world == '…'`
      ["${inputs.s}=='hello'", false],
      ['${steps.done.outputs.count} >= 2 and ${inputs.flag}', true],
      ['${steps.done.outputs.count} > 2 or not ${inputs.flag}', false],
      ['${inputs.missing} == null', true],
      ['${inputs.n} in ${inputs.list}', true],
      ["${steps.skipped.status} == 'skipped'", true],
      ['${coalesce(inputs.missing, inputs.n)} == 3', true],
      ["(${inputs.n} > 2) and ${inputs.s} != ''", true],
    ];
    for (const [text, expected] of cases) {
      expect(compileCondition(text)(scope), text).to.equal(expected);
    }
  });

  it('keeps a placeholder value typed: a string "3" is not the number 3', () => {
    const typed: EvalScope = { inputs: { n: '3' }, steps: {}, context: {} };
    expect(compileCondition('${inputs.n} == 3')(typed)).to.equal(false);
    expect(compileCondition("${inputs.n} == '3'")(typed)).to.equal(true);
  });

  it('takes a YAML boolean as a constant condition', () => {
    expect(compileCondition(true)(scope)).to.equal(true);
    expect(compileCondition(false)(scope)).to.equal(false);
  });

  it('reports syntax errors in conditions with placeholders at their position', () => {
    const error = (text: string): string => {
      try {
        compileCondition(text);
      } catch (e) {
        expect(e).to.be.instanceOf(ExpressionError);
        return (e as Error).message;
      }
      throw new Error(`compiled: ${text}`);
    };
    expect(error('inputs.n > ${x}')).to.match(/^at position 13: expected inputs/);
    expect(error('${inputs.n > 5')).to.match(/position 14: expected an operator or '}'/);
    expect(error('${${inputs.n}} > 1')).to.match(/position 2: .*placeholder inside a placeholder/);
    expect(error("'${inputs.s}' == 'hello world'")).to.match(
      /position 0: expected a placeholder without quotes/,
    );
    expect(error('${inputs.n} > 2 }')).to.match(/position 16: expected an operator or the end/);
    expect(error('${}')).to.match(/position 2: expected a value/);
    expect(error('$inputs.n > 1')).to.match(
      /position 0: expected an operand or operator, found '\$'/,
    );
  });
});

describe('compileTemplate', () => {
  it('keeps the type of a whole-string ${expr}', () => {
    expect(compileTemplate('${inputs.n}')(scope)).to.equal(3);
    expect(compileTemplate('${inputs.list}')(scope)).to.deep.equal([1, 2, 3]);
    expect(compileTemplate('${inputs.flag}')(scope)).to.equal(true);
    expect(compileTemplate('${inputs.nope}')(scope)).to.equal(null);
  });

  it('interpolates ${} inside a longer string: missing as empty, maps as JSON', () => {
    expect(compileTemplate('n=${inputs.n}, s=${inputs.s}')(scope)).to.equal('n=3, s=hello world');
    expect(compileTemplate('[${inputs.nope}]')(scope)).to.equal('[]');
    expect(compileTemplate('${inputs.obj.a} ${inputs.flag}')(scope)).to.equal('{"b":[10,20]} true');
    expect(compileTemplate('${inputs.n}${inputs.n}')(scope)).to.equal('33');
  });

  it('keeps plain strings and scalars as literals, and $${ as a literal ${', () => {
    expect(compileTemplate('plain {text} $5')(scope)).to.equal('plain {text} $5');
    expect(compileTemplate('cost: $${inputs.n}')(scope)).to.equal('cost: ${inputs.n}');
    expect(compileTemplate(42)(scope)).to.equal(42);
    expect(compileTemplate(null)(scope)).to.equal(null);
    expect(compileTemplate(false)(scope)).to.equal(false);
  });

  it('resolves maps and lists recursively', () => {
    const template = {
      a: '${inputs.n}',
      b: ['${steps.done.outputs.text}', 'x ${context.var}'],
      c: { d: 1 },
    };
    expect(compileTemplate(template)(scope)).to.deep.equal({
      a: 3,
      b: ['ok', 'x ctx'],
      c: { d: 1 },
    });
  });

  it('returns a frozen constant for a template without expressions', () => {
    const evaluate = compileTemplate({ a: [1, { b: 'c' }] });
    const first = evaluate(scope);
    expect(first).to.deep.equal({ a: [1, { b: 'c' }] });
    expect(evaluate(scope)).to.equal(first);
    expect(Object.isFrozen(first)).to.equal(true);
  });

  it('keeps a __proto__ key as data', () => {
    const template = JSON.parse('{"__proto__": {"polluted": "${inputs.n}"}}') as unknown;
    const value = compileTemplate(template)(scope) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).to.equal(true);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('reports syntax errors with their position in the template', () => {
    expect(() => compileTemplate('x ${inputs.n')).to.throw(
      ExpressionError,
      /position 12: expected an operator or '}'/,
    );
    expect(() => compileTemplate({ a: ['${)}'] })).to.throw(ExpressionError, /position 2/);
  });

  it('closes ${ at the first } outside quotes', () => {
    expect(compileTemplate('${"}" == "}"}!')(scope)).to.equal('true!');
  });
});

describe('expressionReferences', () => {
  it('lists the steps, inputs and context variables an expression reads', () => {
    expect(
      expressionReferences(
        'coalesce(steps.b.outputs.x, steps.a.status) == inputs.q or context.v in steps.b.outputs.y',
      ),
    ).to.deep.equal({ inputs: ['q'], steps: ['a', 'b'], context: ['v'], item: [] });
  });

  it('counts bracketed step names', () => {
    expect(expressionReferences('steps["a-b"].outputs.x').steps).to.deep.equal(['a-b']);
  });
});
