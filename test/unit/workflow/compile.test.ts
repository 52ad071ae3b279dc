import { expect } from 'chai';
import { ERROR_CODES, ValidationError } from '../../../src/errors.js';
import { DEFAULT_LOOP_MAX, compileWorkflow } from '../../../src/workflow/compile.js';
import type { EvalScope } from '../../../src/workflow/types.js';

const doc = {
  name: 'diamond',
  description: 'a diamond',
  version: 2,
  inputs: { text: { type: 'string', default: 'x' } },
  outputs: {
    joined: { from: '${steps.join.outputs.text}' },
    both: { from: ['${steps.left.status}', '${context.r}'], optional: true },
  },
  steps: [
    {
      name: 'top',
      agent: 'tier0_process',
      inputs: { text: '${inputs.text}' },
      outputs: { result: 'r' },
    },
    {
      name: 'left',
      agent: 'tier2_reviewer',
      depends_on: ['top'],
      when: '${steps.top.outputs.result == "x"}',
      model: 'm',
      tools: ['file_read'],
    },
    {
      name: 'right',
      agent: 'tier3_summarizer',
      depends_on: ['top'],
      max_attempts: 3,
      timeout_seconds: 2,
      loop_until: 'steps.right.outputs.ok',
    },
    {
      name: 'join',
      agent: 'tier0_echo',
      depends_on: ['left', 'right'],
      inputs: { text: 'from ${context.r}' },
    },
  ],
};

describe('compileWorkflow', () => {
  it('indexes dependencies and dependents and reads tiers from agent names', () => {
    const compiled = compileWorkflow(doc);
    expect(compiled.name).to.equal('diamond');
    expect(compiled.description).to.equal('a diamond');
    expect(compiled.version).to.equal('2');
    expect(compiled.document).to.equal(doc);
    expect([...compiled.stepIndex]).to.deep.equal([
      ['top', 0],
      ['left', 1],
      ['right', 2],
      ['join', 3],
    ]);
    expect(
      compiled.steps.map((s) => [s.name, s.index, s.tier, s.dependsOnIndex, s.dependentsIndex]),
    ).to.deep.equal([
      ['top', 0, 0, [], [1, 2]],
      ['left', 1, 2, [0], [3]],
      ['right', 2, 3, [0], [3]],
      ['join', 3, 0, [1, 2], []],
    ]);
    expect(compiled.outputNames).to.deep.equal(['joined', 'both']);
    expect(compiled.optionalOutputs).to.deep.equal(['both']);
  });

  it('carries step settings and defaults', () => {
    const [top, left, right] = compileWorkflow(doc).steps;
    expect(top).to.deep.include({
      description: '',
      model: undefined,
      maxAttempts: undefined,
      timeoutSeconds: undefined,
      loopMax: undefined,
      when: undefined,
      loopUntil: undefined,
    });
    expect(top?.outputs).to.deep.equal({ result: 'r' });
    expect(top?.tools).to.deep.equal([]);
    expect(left).to.deep.include({ model: 'm', tools: ['file_read'] });
    expect(right).to.deep.include({ maxAttempts: 3, timeoutSeconds: 2, loopMax: DEFAULT_LOOP_MAX });
  });

  it('compiles conditions, step inputs and workflow outputs into evaluators', () => {
    const compiled = compileWorkflow(doc);
    const scope: EvalScope = {
      inputs: { text: 'x' },
      steps: {
        top: { status: 'success', outputs: { result: 'x' } },
        left: { status: 'skipped', outputs: null },
        right: { status: 'success', outputs: { ok: true } },
        join: { status: 'success', outputs: { text: 'from x' } },
      },
      context: { r: 'x' },
    };
    const [top, left, right, join] = compiled.steps;
    expect(top?.inputs(scope)).to.deep.equal({ text: 'x' });
    expect(left?.when?.(scope)).to.equal(true);
    expect(right?.loopUntil?.(scope)).to.equal(true);
    expect(join?.inputs(scope)).to.deep.equal({ text: 'from x' });
    expect(compiled.outputs(scope)).to.deep.equal({ joined: 'from x', both: ['skipped', 'x'] });
  });

  it('gives a step without inputs an empty inputs object', () => {
    const compiled = compileWorkflow({ name: 'x', steps: [{ name: 'a', agent: 'tier0_echo' }] });
    expect(compiled.steps[0]?.inputs({ inputs: {}, steps: {}, context: {} })).to.deep.equal({});
    expect(compiled.outputs({ inputs: {}, steps: {}, context: {} })).to.deep.equal({});
  });

  it('throws a ValidationError listing every problem', () => {
    let caught: unknown;
    try {
      compileWorkflow(
        {
          name: 'x',
          steps: [
            { name: 'a', agent: 'tier0_echo', depends_on: ['b'] },
            { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
            { name: 'c', agent: 'nope' },
          ],
        },
        { expectedName: 'y' },
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.code).to.equal(ERROR_CODES.WORKFLOW_INVALID);
    expect(error.status).to.equal(422);
    expect(error.message).to.equal(
      "invalid workflow (3 problems): name 'x' must equal the file name 'y'",
    );
    expect(error.details?.map((d) => d.type)).to.deep.equal([
      'value_error.name_mismatch',
      'value_error.cycle',
      'value_error.pattern',
    ]);
  });

  it('compiles a 1000-step workflow with expressions in every step', () => {
    const steps = Array.from({ length: 1000 }, (_, i) => ({
      name: `s${i}`,
      agent: 'tier0_echo',
      ...(i === 0
        ? {}
        : {
            depends_on: [`s${i - 1}`],
            when: `steps.s${i - 1}.status == "success"`,
            inputs: { v: `\${steps.s${i - 1}.outputs.v}` },
          }),
    }));
    const compiled = compileWorkflow({ name: 'big', steps });
    expect(compiled.steps).to.have.length(1000);
    expect(compiled.steps[999]?.dependsOnIndex).to.deep.equal([998]);
    expect(compiled.steps[998]?.dependentsIndex).to.deep.equal([999]);
  });
});
