import { expect } from 'chai';
import { ERROR_CODES, ValidationError } from '../../../src/errors.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { resolveRunInputs } from '../../../src/workflow/inputs.js';

const workflow = compileWorkflow({
  name: 'inputs_test',
  inputs: {
    text: { type: 'string', required: true },
    count: { type: 'integer', default: 3 },
    ratio: { type: 'number' },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
    flag: { type: 'boolean' },
    options: { type: 'object', default: { depth: 1 } },
    tags: { type: 'array' },
  },
  steps: [{ name: 'a', agent: 'tier0_echo' }],
});

function inputError(input: unknown, prefix?: (string | number)[]): ValidationError {
  try {
    resolveRunInputs(workflow, input, prefix);
  } catch (error) {
    expect(error).to.be.instanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('resolveRunInputs', () => {
  it('applies defaults and keeps given values', () => {
    expect(
      resolveRunInputs(workflow, { text: 'hi', ratio: 0.5, flag: false, tags: [] }),
    ).to.deep.equal({
      text: 'hi',
      count: 3,
      ratio: 0.5,
      mode: 'fast',
      flag: false,
      options: { depth: 1 },
      tags: [],
    });
  });

  it('gives each run its own copy of an object default', () => {
    const first = resolveRunInputs(workflow, { text: 'a' });
    (first.options as Record<string, unknown>).depth = 9;
    expect(resolveRunInputs(workflow, { text: 'b' }).options).to.deep.equal({ depth: 1 });
  });

  it('rejects keys the workflow does not declare, naming each and the declared inputs', () => {
    expect(inputError({ text: 'a', cuont: 4, extra: { x: 1 } }).details).to.deep.equal([
      {
        loc: ['input_data', 'cuont'],
        msg: "unknown input 'cuont'; inputs_test takes text, count, ratio, mode, flag, options, tags",
        type: 'extra_forbidden',
      },
      {
        loc: ['input_data', 'extra'],
        msg: "unknown input 'extra'; inputs_test takes text, count, ratio, mode, flag, options, tags",
        type: 'extra_forbidden',
      },
    ]);
  });

  it('passes any key through when the workflow declares no inputs', () => {
    const open = compileWorkflow({ name: 'open', steps: [{ name: 's', agent: 'tier0_echo' }] });
    expect(resolveRunInputs(open, { anything: { x: 1 }, n: '4' })).to.deep.equal({
      anything: { x: 1 },
      n: '4',
    });
  });

  it('converts the strings form clients send for integer, number and boolean inputs', () => {
    expect(
      resolveRunInputs(workflow, {
        text: '40',
        count: '40',
        ratio: ' -1.5e3 ',
        flag: 'TRUE',
        mode: 'slow',
      }),
    ).to.deep.include({ text: '40', count: 40, ratio: -1500, flag: true, mode: 'slow' });
    expect(resolveRunInputs(workflow, { text: 'a', flag: 'false', count: '+7' })).to.deep.include({
      flag: false,
      count: 7,
    });
    expect(resolveRunInputs(workflow, { text: 'a', ratio: '.5' }).ratio).to.equal(0.5);
  });

  it('rejects strings that are not exactly such a value, showing the value', () => {
    const cases: [string, unknown, string][] = [
      ['count', '4x', 'an integer, not "4x"'],
      ['count', '1.5', 'an integer, not "1.5"'],
      ['count', '1e3', 'an integer, not "1e3"'],
      ['count', '99999999999999999999', 'an integer, not "99999999999999999999"'],
      ['ratio', 'NaN', 'a number, not "NaN"'],
      ['ratio', 'Infinity', 'a number, not "Infinity"'],
      ['ratio', '0x10', 'a number, not "0x10"'],
      ['ratio', '1e999', 'a number, not "1e999"'],
      ['flag', '1', 'true or false, not "1"'],
      ['flag', 'yes', 'true or false, not "yes"'],
      ['options', '{"depth":2}', 'a mapping, not "{\\"depth\\":2}"'],
    ];
    for (const [name, value, expected] of cases) {
      expect(inputError({ text: 'a', [name]: value }).details, String(value)).to.deep.equal([
        {
          loc: ['input_data', name],
          msg: `input '${name}' must be ${expected}`,
          type: 'type_error',
        },
      ]);
    }
  });

  it('checks the enum after converting', () => {
    const levels = compileWorkflow({
      name: 'levels',
      inputs: { level: { type: 'integer', enum: [1, 2] } },
      steps: [{ name: 's', agent: 'tier0_echo' }],
    });
    expect(resolveRunInputs(levels, { level: '2' })).to.deep.equal({ level: 2 });
    expect(() => resolveRunInputs(levels, { level: '3' })).to.throw(/must be one of 1, 2, not 3/);
  });

  it('treats null as absent: the default applies, or required reports it', () => {
    expect(resolveRunInputs(workflow, { text: 'a', count: null }).count).to.equal(3);
    expect(inputError({ text: null }).details).to.deep.equal([
      { loc: ['input_data', 'text'], msg: "input 'text' is required", type: 'missing' },
    ]);
  });

  it('treats a blank string for a non-string input as absent, the way forms send an empty field', () => {
    const resolved = resolveRunInputs(workflow, { text: 'a', count: '', ratio: ' ', flag: '' });
    expect(resolved).to.deep.equal({
      text: 'a',
      count: 3,
      mode: 'fast',
      options: { depth: 1 },
    });
    const required = compileWorkflow({
      name: 'required_number',
      inputs: { n: { type: 'number', required: true } },
      steps: [{ name: 's', agent: 'tier0_echo' }],
    });
    expect(() => resolveRunInputs(required, { n: '' })).to.throw(/input 'n' is required/);
    // A string input keeps its blank value: it may mean something.
    expect(resolveRunInputs(workflow, { text: '' }).text).to.equal('');
  });

  it('reports every problem at once, with the loc prefix', () => {
    const error = inputError(
      { count: 'three', ratio: 'NaN', mode: 'medium', flag: 'on', options: [], tags: {} },
      ['input'],
    );
    expect(error.code).to.equal(ERROR_CODES.INPUT_INVALID);
    expect(error.status).to.equal(422);
    expect(error.details).to.deep.equal([
      { loc: ['input', 'text'], msg: "input 'text' is required", type: 'missing' },
      {
        loc: ['input', 'count'],
        msg: `input 'count' must be an integer, not "three"`,
        type: 'type_error',
      },
      {
        loc: ['input', 'ratio'],
        msg: `input 'ratio' must be a number, not "NaN"`,
        type: 'type_error',
      },
      {
        loc: ['input', 'mode'],
        msg: `input 'mode' must be one of "fast", "slow", not "medium"`,
        type: 'value_error.enum',
      },
      {
        loc: ['input', 'flag'],
        msg: `input 'flag' must be true or false, not "on"`,
        type: 'type_error',
      },
      {
        loc: ['input', 'options'],
        msg: "input 'options' must be a mapping, not a list",
        type: 'type_error',
      },
      {
        loc: ['input', 'tags'],
        msg: "input 'tags' must be a list, not a mapping",
        type: 'type_error',
      },
    ]);
  });

  it('distinguishes integer from number', () => {
    expect(inputError({ text: 'a', count: 1.5 }).details?.[0]?.loc).to.deep.equal([
      'input_data',
      'count',
    ]);
    expect(resolveRunInputs(workflow, { text: 'a', ratio: 2 }).ratio).to.equal(2);
  });

  it('rejects input that is not a mapping', () => {
    for (const input of [[], 'text', 5]) {
      expect(inputError(input).details).to.deep.equal([
        {
          loc: ['input_data'],
          msg: `inputs must be a mapping of input names to values, not ${Array.isArray(input) ? 'a list' : typeof input === 'string' ? 'a string' : 'an integer'}`,
          type: 'type_error',
        },
      ]);
    }
  });

  it('treats missing input as an empty mapping', () => {
    const open = compileWorkflow({
      name: 'x',
      inputs: { a: { type: 'string', default: 'd' } },
      steps: [{ name: 's', agent: 'tier0_echo' }],
    });
    expect(resolveRunInputs(open, undefined)).to.deep.equal({ a: 'd' });
  });
});
