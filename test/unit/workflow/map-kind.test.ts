import { expect } from 'chai';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { kindKeyProblem } from '../../../src/workflow/step-kinds.js';
import { validateWorkflow } from '../../../src/workflow/validate.js';

const scope = { inputs: {}, steps: {}, context: {} };

describe('map kind (for_each) at load', () => {
  it('compiles for_each + agent as one map step whose body is the agent step', () => {
    const workflow = compileWorkflow({
      name: 'm',
      steps: [
        {
          name: 'each',
          for_each: [1, 2],
          as: 'n',
          max_attempts: 3,
          agent: 'tier2_writer',
          inputs: { v: '${item.n}', i: '${item.index}' },
        },
      ],
    });
    const step = workflow.steps[0]!;
    expect(step).to.include({ kind: 'map', agent: 'tier2_writer', tier: 2, maxAttempts: 1 });
    expect(step.inputs(scope)).to.deep.equal({ items: 2 });
    expect(step.map).to.include({ as: 'n', maxConcurrency: 4, onItemFailure: 'fail_fast' });
    expect(step.map!.body).to.include({ kind: 'agent', agent: 'tier2_writer', maxAttempts: 3 });
    expect(step.map!.body.inputs({ ...scope, item: { n: 'x', index: 5 } })).to.deep.equal({
      v: 'x',
      i: 5,
    });
  });

  it('finds no kind problem in for_each with agent: the agent is the map body', () => {
    expect(kindKeyProblem({ name: 'a', for_each: [], agent: 'tier0_echo' })).to.equal(undefined);
  });

  it('refuses a map step without a body, as: index, and loop_until', () => {
    const errors = validateWorkflow({
      name: 'm',
      steps: [
        { name: 'a', for_each: [1] },
        { name: 'b', for_each: [1], as: 'index', agent: 'tier0_echo' },
        { name: 'c', for_each: [1], agent: 'tier0_echo', loop_until: true },
      ],
    });
    expect(errors.map((e) => [e.loc, e.type])).to.deep.equal([
      [['steps', 0, 'agent'], 'missing'],
      [['steps', 1, 'as'], 'value_error.map'],
      [['steps', 2, 'loop_until'], 'value_error.map'],
    ]);
  });

  it('refuses the map keys on a step without for_each', () => {
    const errors = validateWorkflow({
      name: 'm',
      steps: [{ name: 'a', agent: 'tier0_echo', as: 'x', max_concurrency: 2 }],
    });
    expect(errors.map((e) => e.loc)).to.deep.equal([
      ['steps', 0, 'as'],
      ['steps', 0, 'max_concurrency'],
    ]);
  });

  it('checks item references at load: only in a map step inputs, only item.<as> and item.index', () => {
    const errors = validateWorkflow({
      name: 'm',
      steps: [
        { name: 'a', agent: 'tier0_echo', inputs: { v: '${item.value}' } },
        {
          name: 'b',
          for_each: [1],
          as: 'file',
          agent: 'tier0_echo',
          when: '${item.file} == 1',
          inputs: { ok: '${item.file}', i: '${item.index}', whole: '${item}', bad: '${item.path}' },
        },
      ],
      outputs: { o: { from: '${item.file}' } },
    });
    expect(errors.map((e) => [e.loc, e.msg])).to.deep.equal([
      [
        ['outputs', 'o', 'from'],
        "item.file: item is defined only in a map step's inputs (the item for_each is at)",
      ],
      [
        ['steps', 0, 'inputs', 'v'],
        "item.value: item is defined only in a map step's inputs (the item for_each is at)",
      ],
      [
        ['steps', 1, 'inputs', 'bad'],
        'item.path is not defined: the item is item.file, its position item.index',
      ],
      [
        ['steps', 1, 'when'],
        "item.file: item is defined only in a map step's inputs (the item for_each is at)",
      ],
    ]);
  });

  it('checks for_each references like any: an unknown step, a step not depended on', () => {
    const errors = validateWorkflow({
      name: 'm',
      steps: [
        { name: 'list', agent: 'tier0_echo' },
        { name: 'each', for_each: '${steps.list.outputs.files}', agent: 'tier0_echo' },
      ],
    });
    expect(errors.map((e) => [e.loc, e.type])).to.deep.equal([
      [['steps', 1, 'for_each'], 'value_error.step_reference'],
    ]);
  });
});
