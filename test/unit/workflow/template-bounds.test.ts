import { expect } from 'chai';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import {
  EvaluationLimitError,
  TemplateSizeError,
  compileCondition,
  compileTemplate,
} from '../../../src/workflow/expressions.js';
import { truncatedKeys } from '../../../src/workflow/size-bounds.js';
import type { EvalScope } from '../../../src/workflow/types.js';

function scope(inputs: Record<string, unknown>): EvalScope {
  return { inputs, steps: {}, context: {} };
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('template and evaluation bounds', () => {
  it('fails a rendering that would interpolate more than maxBytes, across the whole template', () => {
    const repeated = '${inputs.t}'.repeat(100);
    const template = compileTemplate({ a: repeated, b: repeated }, { maxBytes: 150_000 });
    expect(template(scope({ t: 'y'.repeat(700) }))).to.deep.equal({
      a: 'y'.repeat(70_000),
      b: 'y'.repeat(70_000),
    });
    expect(() => template(scope({ t: 'y'.repeat(900) }))).to.throw(
      TemplateSizeError,
      'rendered template exceeds 150000 bytes (AGENTIC_MAX_TEMPLATE_BYTES)',
    );
    // Each evaluation starts with the whole budget again.
    expect(template(scope({ t: 'z' }))).to.deep.equal({ a: 'z'.repeat(100), b: 'z'.repeat(100) });
  });

  it('does not count a whole ${expr}: it refers to the value, it builds no text', () => {
    const template = compileTemplate({ a: '${inputs.t}', b: '${inputs.t}' }, { maxBytes: 1024 });
    const big = 'y'.repeat(10_000);
    expect(template(scope({ t: big }))).to.deep.equal({ a: big, b: big });
  });

  it('fails the step of a compiled workflow whose inputs exceed the template bound, and truncates over-long input entries with a marker', () => {
    const workflow = compileWorkflow(
      {
        name: 'w',
        inputs: { t: { type: 'string' } },
        steps: [
          { name: 'a', agent: 'tier0_echo', inputs: { x: '${inputs.t}${inputs.t}' } },
          { name: 'b', agent: 'tier0_echo', inputs: { big: '${inputs.t}', small: 'ok' } },
        ],
      },
      { limits: { maxTemplateBytes: 1500, maxStepIoBytes: 1024 } },
    );
    const [a, b] = workflow.steps;
    expect(() => a!.inputs(scope({ t: 'y'.repeat(1000) }))).to.throw(TemplateSizeError);
    const input = b!.inputs(scope({ t: 'y'.repeat(5000) })) as Record<string, unknown>;
    expect(input).to.deep.equal({
      big: { __truncated__: true, bytes: 5002, preview: 'y'.repeat(200) },
      small: 'ok',
    });
    expect(truncatedKeys(input)).to.deep.equal(['big']);
  });

  it('turns workflow outputs over the template bound into a marker naming why', () => {
    const workflow = compileWorkflow(
      {
        name: 'w',
        inputs: { t: { type: 'string' } },
        outputs: { o: { from: '${inputs.t}${inputs.t}' } },
        steps: [{ name: 'a', agent: 'tier0_echo' }],
      },
      { limits: { maxTemplateBytes: 1024, maxStepIoBytes: 1024 } },
    );
    expect(workflow.outputs(scope({ t: 'y'.repeat(1000) }))).to.deep.equal({
      __truncated__: true,
      error: 'rendered template exceeds 1024 bytes (AGENTIC_MAX_TEMPLATE_BYTES)',
    });
  });

  it('makes an evaluation that overflows the stack an error, not a silent null', () => {
    const condition = compileCondition('inputs.x == inputs.y');
    const inputs = { x: nested(200_000), y: nested(200_000) };
    expect(() => condition(scope(inputs))).to.throw(
      EvaluationLimitError,
      /^expression evaluation failed: Maximum call stack size exceeded/,
    );
    const template = compileTemplate('value: ${inputs.x}');
    expect(() => template(scope(inputs))).to.throw(EvaluationLimitError);
  });

  it('refuses expressions nested past the parser bound with a clear error', () => {
    expect(() => compileCondition(`${'('.repeat(100_000)}1${')'.repeat(100_000)}`)).to.throw(
      /at most 64 levels of nesting/,
    );
    expect(() => compileCondition(`${'not '.repeat(100_000)}true`)).to.throw(
      /at most 64 levels of nesting/,
    );
  });
});
