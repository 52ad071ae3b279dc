import { expect } from 'chai';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { workflowCallProblems } from '../../../src/workflow/kinds/workflow-call.js';
import type { CompiledWorkflow } from '../../../src/workflow/types.js';
import { validateWorkflow } from '../../../src/workflow/validate.js';

/** A lookup over compiled documents by name. */
function lookupOf(...documents: object[]) {
  const byName = new Map<string, CompiledWorkflow>();
  for (const document of documents) {
    const compiled = compileWorkflow(document);
    byName.set(compiled.name, compiled);
  }
  return (name: string) => Promise.resolve(byName.get(name));
}

const CHILD = {
  name: 'child',
  inputs: { text: { type: 'string' } },
  outputs: { out: { from: '${steps.a.outputs.text}' } },
  steps: [{ name: 'a', agent: 'tier0_echo', inputs: { text: '${inputs.text}' } }],
};

describe('sub-workflow steps at load (kinds/workflow-call.ts)', () => {
  it('compiles a workflow step as kind workflow, labelled workflow:<name>', () => {
    const parent = compileWorkflow({ name: 'p', steps: [{ name: 's', workflow: 'child' }] });
    expect(parent.steps[0]).to.deep.include({
      kind: 'workflow',
      agent: 'workflow:child',
      tier: 0,
      workflowCall: { workflow: 'child' },
    });
  });

  it('refuses agent-only keys on a workflow step, and two kind keys', () => {
    const errors = validateWorkflow({
      name: 'p',
      steps: [
        { name: 's', workflow: 'child', tools: ['file_read'], model: 'x' },
        { name: 't', workflow: 'child', agent: 'tier0_echo' },
      ],
    });
    expect(errors.map((e) => [e.loc, e.type])).to.deep.equal([
      [['steps', 0, 'model'], 'value_error.step_kind'],
      [['steps', 0, 'tools'], 'value_error.step_kind'],
      [['steps', 1, 'workflow'], 'value_error.step_kind'],
    ]);
  });

  it("reads output keys in dotted and bracket form, and the step's outputs: mapping", async () => {
    const parent = compileWorkflow({
      name: 'p',
      outputs: { o: { from: "${steps.s.outputs['missing_b']}" } },
      steps: [
        { name: 's', workflow: 'child', inputs: { text: 'x' }, outputs: { gone: 'var' } },
        {
          name: 't',
          agent: 'tier0_echo',
          depends_on: ['s'],
          when: 'steps.s.outputs.missing_a != null and steps.s.outputs.out != null',
          inputs: { v: '${steps.s.outputs.out} and ${context.var}' },
        },
      ],
    });
    const errors = await workflowCallProblems(parent, lookupOf(CHILD));
    expect(errors.map((e) => [e.loc, e.msg])).to.deep.equal([
      [
        ['steps', 0, 'outputs', 'gone'],
        "workflow 'child' declares no output 'gone' (its outputs: out)",
      ],
      [['steps', 1, 'when'], "workflow 'child' declares no output 'missing_a' (its outputs: out)"],
      [
        ['outputs', 'o', 'from'],
        "workflow 'child' declares no output 'missing_b' (its outputs: out)",
      ],
    ]);
  });

  it('lets a child that declares no inputs take any', async () => {
    const open = { name: 'open', steps: [{ name: 'a', agent: 'tier0_echo' }] };
    const parent = compileWorkflow({
      name: 'p',
      steps: [{ name: 's', workflow: 'open', inputs: { anything: 1 } }],
    });
    expect(await workflowCallProblems(parent, lookupOf(open))).to.deep.equal([]);
  });

  it('follows the chain: an unknown workflow further down is reported at the root step', async () => {
    const middle = { name: 'middle', steps: [{ name: 'm', workflow: 'gone' }] };
    const parent = compileWorkflow({ name: 'p', steps: [{ name: 's', workflow: 'middle' }] });
    expect(await workflowCallProblems(parent, lookupOf(middle))).to.deep.equal([
      {
        loc: ['steps', 0, 'workflow'],
        msg: "unknown workflow 'gone' (in p → middle → gone)",
        type: 'value_error.unknown_workflow',
      },
    ]);
  });

  it('finds a cycle below the root that does not pass through it', async () => {
    const b = { name: 'b', steps: [{ name: 'x', workflow: 'c' }] };
    const c = { name: 'c', steps: [{ name: 'y', workflow: 'b' }] };
    const parent = compileWorkflow({ name: 'a', steps: [{ name: 's', workflow: 'b' }] });
    const [problem] = await workflowCallProblems(parent, lookupOf(b, c));
    expect(problem).to.include({
      msg: 'recursive sub-workflows: a → b → c → b',
      type: 'value_error.recursion',
    });
  });
});
