import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { resolveRunInputs } from '../../../src/workflow/inputs.js';
import { parseWorkflowYaml } from '../../../src/workflow/parse.js';
import { createWorkflowRegistry } from '../../../src/workflow/registry.js';
import type { EvalScope, StepView } from '../../../src/workflow/types.js';
import { isTruthy } from '../../../src/workflow/values.js';

const WORKFLOWS_DIR = join(import.meta.dirname, '..', '..', '..', 'workflows');

describe('shipped workflows', () => {
  const registry = createWorkflowRegistry({ dir: WORKFLOWS_DIR });

  it('are the documented ones', async () => {
    expect(await registry.list()).to.deep.equal([
      'code_review',
      'conditional_branching',
      'human_review',
      'map_demo',
      'map_sub_workflow_demo',
      'parallel_analysis',
      'sub_workflow_demo',
      'test_deterministic',
    ]);
  });

  it('sub_workflow_demo calls test_deterministic, checked against it at load', async () => {
    const { compiled } = await registry.get('sub_workflow_demo');
    expect(compiled.steps.map((step) => [step.name, step.kind, step.agent])).to.deep.equal([
      ['summarise', 'workflow', 'workflow:test_deterministic'],
      ['report', 'agent', 'tier0_echo'],
    ]);
  });

  it('every *.yaml file except the catalogue validates, named after its file', async () => {
    const files = (await readdir(WORKFLOWS_DIR)).filter(
      (f) => /\.ya?ml$/.test(f) && f !== 'agents.yaml',
    );
    expect(files).to.have.length.greaterThan(3);
    for (const file of files) {
      const name = file.replace(/\.ya?ml$/, '');
      const document = parseWorkflowYaml(await readFile(join(WORKFLOWS_DIR, file), 'utf8'));
      expect(() => compileWorkflow(document, { expectedName: name }), file).to.not.throw();
    }
  });

  it('describe the workflow, every step and every input', async () => {
    for (const name of await registry.list()) {
      const doc = (await registry.get(name)).compiled.document;
      expect(doc.description, name).to.be.a('string').and.not.equal('');
      for (const step of doc.steps)
        expect(step.description, `${name}.${step.name}`).to.be.a('string').and.not.equal('');
      for (const [input, spec] of Object.entries(doc.inputs ?? {})) {
        expect(spec.description, `${name}.inputs.${input}`).to.be.a('string').and.not.equal('');
      }
    }
  });

  it('run with their defaults alone', async () => {
    for (const name of await registry.list()) {
      const { compiled } = await registry.get(name);
      expect(() => resolveRunInputs(compiled, {}), name).to.not.throw();
    }
  });

  it('test_deterministic uses tier-0 agents only', async () => {
    const { compiled } = await registry.get('test_deterministic');
    expect(compiled.steps.every((step) => step.tier === 0)).to.equal(true);
    expect(compiled.outputNames.length).to.be.greaterThan(0);
  });

  it('conditional_branching takes one branch and skips the other for the default inputs', async () => {
    const { compiled } = await registry.get('conditional_branching');
    const inputs = resolveRunInputs(compiled, {});
    const text = inputs.text as string;
    const steps: Record<string, StepView> = {
      measure: { status: 'success', outputs: { count: text.length } },
    };
    const scope = (): EvalScope => ({ inputs, steps, context: {} });
    const byName = (n: string) => compiled.steps[compiled.stepIndex.get(n) as number];
    const shortRuns = isTruthy(byName('short_branch')?.when?.(scope()));
    const longRuns = isTruthy(byName('long_branch')?.when?.(scope()));
    expect([shortRuns, longRuns]).to.deep.equal([true, false]);
    // Simulate the engine: the short branch echoes its inputs, the long one is skipped.
    steps.short_branch = {
      status: 'success',
      outputs: byName('short_branch')?.inputs(scope()) as Record<string, unknown>,
    };
    steps.long_branch = { status: 'skipped', outputs: null };
    steps.join = {
      status: 'success',
      outputs: byName('join')?.inputs(scope()) as Record<string, unknown>,
    };
    expect(compiled.outputs(scope())).to.deep.equal({
      branch: 'short',
      result: text,
      skipped_branch_status: 'skipped',
    });
  });

  it('code_review parses with tier0_parser, then runs two reviews in parallel and a join', async () => {
    const { compiled } = await registry.get('code_review');
    const [parse, review, audit, summary] = compiled.steps;
    expect(parse?.agent).to.equal('tier0_parser');
    expect(review?.dependsOn).to.deep.equal(['parse']);
    expect(audit?.dependsOn).to.deep.equal(['parse']);
    expect(summary?.dependsOn).to.deep.equal(['review', 'security_audit']);
    for (const step of [review, audit, summary]) {
      expect(step?.tier).to.be.greaterThan(0);
      expect(Object.keys(step?.outputs ?? {})).to.not.deep.equal([]);
    }
  });

  it('parallel_analysis fans one source out to at least four parallel steps and joins them', async () => {
    const { compiled } = await registry.get('parallel_analysis');
    const source = compiled.steps[0];
    const fanned = (source?.dependentsIndex ?? []).map((i) => compiled.steps[i]);
    expect(fanned.length).to.be.at.least(4);
    const join = compiled.steps.find((step) => step.dependsOn.length >= 4);
    expect(join, 'a join step').to.not.equal(undefined);
  });
});
