/**
 * Sub-workflow steps over HTTP: the checks that need the other workflows (unknown child, inputs,
 * outputs read, recursion with its path, depth) answer 422 with their loc on validate, save and
 * load; the shipped example runs, linked to its child; `/machine` names the child.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';

interface Detail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A workflow of one sub-workflow step calling `child` with `inputs`. */
function caller(name: string, child: string, extra = ''): string {
  return `name: ${name}
description: Calls ${child}.
steps:
  - name: call
    workflow: ${child}
    description: The child.
${extra}`;
}

describe('HTTP sub-workflow steps', function () {
  this.timeout(30_000);
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
  });
  afterEach(async () => {
    await svc.dispose();
  });

  async function validate(yamlText: string): Promise<{ status: number; detail: Detail[] }> {
    const res = await call(svc.url, 'POST', '/api/workflows/validate', { yaml_text: yamlText });
    return { status: res.status, detail: (res.body as { detail: Detail[] }).detail };
  }

  it('validate answers 422 for an unknown child workflow, at the step', async () => {
    const res = await validate(caller('p', 'no_such_workflow'));
    expect(res.status).to.equal(422);
    expect(res.detail).to.deep.equal([
      {
        loc: ['steps', 0, 'workflow'],
        msg: "unknown workflow 'no_such_workflow'",
        type: 'value_error.unknown_workflow',
      },
    ]);
  });

  it('validate answers 422 for inputs the child does not declare, and outputs it does not', async () => {
    const res = await validate(
      caller(
        'p',
        'test_deterministic',
        `    inputs: { text: hi, colour: red }
  - name: after
    agent: tier0_echo
    description: Reads the child's outputs.
    depends_on: [call]
    inputs: { a: '\${steps.call.outputs.summary}', b: '\${steps.call.outputs.nope}' }
`,
      ),
    );
    expect(res.status).to.equal(422);
    expect(res.detail).to.deep.equal([
      {
        loc: ['steps', 0, 'inputs', 'colour'],
        msg: "workflow 'test_deterministic' declares no input 'colour' (its inputs: text, label)",
        type: 'value_error.unknown_input',
      },
      {
        loc: ['steps', 1, 'inputs', 'b'],
        msg: "workflow 'test_deterministic' declares no output 'nope' (its outputs: processed, length, summary)",
        type: 'value_error.unknown_output',
      },
    ]);
  });

  it('validate answers 422 when a required child input is not given', async () => {
    await writeFile(
      join(svc.workflowsDir, 'needs_text.yaml'),
      `name: needs_text
description: Needs a text.
inputs: { text: { type: string, required: true, description: The text. } }
steps:
  - { name: a, agent: tier0_echo, description: Echo., inputs: { text: '\${inputs.text}' } }
`,
    );
    const res = await validate(caller('p', 'needs_text'));
    expect(res.status).to.equal(422);
    expect(res.detail).to.deep.equal([
      {
        loc: ['steps', 0, 'inputs'],
        msg: "workflow 'needs_text' requires input 'text'",
        type: 'missing',
      },
    ]);
  });

  it('PUT refuses a workflow that would call itself through another, naming the cycle', async () => {
    await writeFile(join(svc.workflowsDir, 'wf_b.yaml'), caller('wf_b', 'wf_a'));
    // wf_b calls wf_a, which does not exist yet: wf_b does not load.
    const broken = await call(svc.url, 'GET', '/api/workflows/wf_b/dag');
    expect(broken.status).to.equal(422);
    const put = await call(svc.url, 'PUT', '/api/workflows/wf_a', {
      yaml_text: caller('wf_a', 'wf_b'),
    });
    expect(put.status).to.equal(422);
    expect((put.body as { detail: Detail[] }).detail).to.deep.equal([
      {
        loc: ['steps', 0, 'workflow'],
        msg: 'recursive sub-workflows: wf_a → wf_b → wf_a',
        type: 'value_error.recursion',
      },
    ]);
    const direct = await validate(caller('wf_self', 'wf_self'));
    expect(direct.detail).to.deep.equal([
      {
        loc: ['steps', 0, 'workflow'],
        msg: 'recursive sub-workflows: wf_self → wf_self',
        type: 'value_error.recursion',
      },
    ]);
  });

  it('refuses chains of sub-workflows deeper than 8 levels', async () => {
    // level_9 … level_1 each call the next; level_9 is the leaf.
    await writeFile(
      join(svc.workflowsDir, 'level_9.yaml'),
      `name: level_9
description: The leaf.
steps:
  - { name: a, agent: tier0_echo, description: Echo. }
`,
    );
    for (let level = 8; level >= 1; level--) {
      await writeFile(
        join(svc.workflowsDir, `level_${level}.yaml`),
        caller(`level_${level}`, `level_${level + 1}`),
      );
    }
    // level_1 → … → level_9 is 8 levels below level_1: accepted.
    expect((await call(svc.url, 'GET', '/api/workflows/level_1/dag')).status).to.equal(200);
    const deeper = await validate(caller('level_0', 'level_1'));
    expect(deeper.status).to.equal(422);
    expect(deeper.detail).to.deep.equal([
      {
        loc: ['steps', 0, 'workflow'],
        msg: `sub-workflows nest deeper than 8 levels: level_0 → ${Array.from({ length: 9 }, (_, i) => `level_${i + 1}`).join(' → ')}`,
        type: 'value_error.workflow_depth',
      },
    ]);
  });

  it('runs the shipped sub_workflow_demo: the parent and its child run files, linked both ways', async () => {
    const res = await call(svc.url, 'POST', '/api/run', {
      workflow: 'sub_workflow_demo',
      input_data: { text: '  abc  ' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.final_output).to.deep.equal({
      child_summary: '[demo] abc (3 characters)',
      child_length: 3,
      report: 'child said [demo] abc (3 characters)',
    });
    const childId = `${runId}-summarise-1`;
    expect(record.extra).to.deep.include({ child_run_ids: [childId] });
    const child = await call(svc.url, 'GET', `/api/runs/${childId}`);
    expect(child.status).to.equal(200);
    const body = child.body as { status: string; workflow_name: string; extra: object };
    expect(body).to.include({ status: 'success', workflow_name: 'test_deterministic' });
    expect(body.extra).to.deep.include({ parent_run_id: runId, parent_step: 'summarise' });
    const explain = await call(svc.url, 'GET', `/api/runs/${runId}/explain`);
    expect(explain.status, explain.text).to.equal(200);
    expect(explain.body).to.deep.include({ status: 'success', reason: 'finished', steps: [] });
  });

  it('GET /api/workflows/{name}/machine names the child workflow in the step region', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/sub_workflow_demo/machine');
    expect(res.status).to.equal(200);
    const text = JSON.stringify(res.body);
    expect(text).to.include('workflow:test_deterministic');
    expect(text).to.include("child run of workflow 'test_deterministic'");
  });

  it('GET /api/workflows/{name}/machine draws the child run as the invoked child of the running state', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/sub_workflow_demo/machine');
    expect(res.status).to.equal(200);
    type Node = { states?: Record<string, Node>; invoke?: unknown };
    const regions = (res.body as Node).states!.running!.states!;
    const running = regions.summarise!.states!.running!;
    expect(running.invoke).to.have.length(1);
    const [invoke] = running.invoke as Record<string, unknown>[];
    expect(invoke).to.include({ id: 'child:summarise', src: 'workflowRun' });
    expect(invoke!.input).to.deep.equal({ step: 'summarise', workflow: 'test_deterministic' });
    expect(invoke!.description).to.match(/child run of workflow 'test_deterministic'/);
    // Only the sub-workflow step's running state invokes anything.
    expect(regions.report!.states!.running!.invoke).to.equal(undefined);
    expect(regions.summarise!.states!.pending!.invoke).to.equal(undefined);
  });
});
