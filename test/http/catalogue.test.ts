import { expect } from 'chai';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createActor, createMachine, type AnyMachineSnapshot } from 'xstate';
import { packageVersion } from '../../src/config/index.js';
import type { EngineInput } from '../../machines/engine-contract.js';
import { graphImplementations } from '../../src/engine/adapters/graph.js';
import { compileWorkflow, parseWorkflowYaml } from '../../src/workflow/index.js';
import { call, startTestService, type TestService } from './harness.js';

describe('HTTP catalogue endpoints', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
  });
  afterEach(async () => {
    await svc.dispose();
  });

  it('GET /api/health answers status ok and the package version', async () => {
    const res = await call(svc.url, 'GET', '/api/health');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ok', version: packageVersion });
    expect(res.headers.get('x-request-id')).to.be.a('string');
  });

  it('GET /api/health/ready reports every check when ready', async () => {
    const res = await call(svc.url, 'GET', '/api/health/ready');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      status: 'ready',
      checks: {
        runs_dir: { ok: true },
        runs_dir_space: { ok: true },
        runs_dir_write: { ok: true },
        run_writes: { ok: true },
        run_history: { ok: true },
        active_runs: { ok: true, detail: '0 of at most 100 runs active' },
        workflows_dir: { ok: true },
        replay_store: { ok: true },
      },
    });
  });

  it('GET /api/health/ready answers 503 naming the failing check', async () => {
    await rm(svc.runsDir, { recursive: true, force: true });
    const res = await call(svc.url, 'GET', '/api/health/ready');
    expect(res.status).to.equal(503);
    const body = res.body as { detail: string; checks: Record<string, { ok: boolean }> };
    expect(body.detail).to.match(/^not ready: runs_dir/);
    expect(body.checks.runs_dir?.ok).to.equal(false);
    expect(body.checks.workflows_dir?.ok).to.equal(true);
  });

  it('GET /api/agents lists the catalogue with tiers as strings, re-read per request', async () => {
    const first = await call(svc.url, 'GET', '/api/agents');
    expect(first.status).to.equal(200);
    const agents = (first.body as { agents: Record<string, unknown>[] }).agents;
    expect(agents.length).to.be.greaterThan(3);
    for (const agent of agents) {
      expect(agent).to.have.all.keys('name', 'description', 'tier', 'role');
      expect(agent.tier).to.be.a('string');
    }
    const extra = join(svc.root, 'extra-agents');
    await mkdir(extra);
    const restarted = await startTestService({
      root: svc.root,
      env: { AGENTIC_EXTERNAL_AGENTS_DIR: extra },
    });
    try {
      await writeFile(
        join(extra, 'new.yaml'),
        'agents:\n  zz_new_role:\n    name: Newcomer\n    description: Added at run time.\n    tier: 2\n    persona: You are new.\n',
      );
      const second = await call(restarted.url, 'GET', '/api/agents');
      const names = (second.body as { agents: { name: string }[] }).agents.map((a) => a.name);
      expect(names).to.include('Newcomer');
    } finally {
      await restarted.dispose();
    }
  });

  it('GET /api/agents lists the deterministic tier-0 agents with tier "0"', async () => {
    const res = await call(svc.url, 'GET', '/api/agents');
    const agents = (res.body as { agents: { name: string; tier: string; role: string }[] }).agents;
    const tier0 = agents.filter((agent) => agent.tier === '0').map((agent) => agent.name);
    expect(tier0).to.deep.equal([
      'tier0_echo',
      'tier0_fail',
      'tier0_sleep',
      'tier0_process',
      'tier0_counter',
      'tier0_parser',
      'tier0_tool',
    ]);
    expect(agents.find((agent) => agent.name === 'tier0_sleep')?.role).to.equal('sleep');
  });

  it('GET /api/workflows lists the shipped workflows', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      workflows: [
        'code_review',
        'conditional_branching',
        'human_review',
        'map_demo',
        'map_sub_workflow_demo',
        'parallel_analysis',
        'sub_workflow_demo',
        'test_deterministic',
      ],
    });
  });

  it('GET /api/adapters answers the primary shape', async () => {
    const res = await call(svc.url, 'GET', '/api/adapters');
    expect(res.body).to.deep.equal({ adapters: ['native', 'graph'] });
  });

  it('GET /api/workflows/{name}/dag has nodes with explicit depends_on, edges and inputs', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/test_deterministic/dag');
    expect(res.status).to.equal(200);
    const dag = res.body as Record<string, unknown>;
    expect(dag.name).to.equal('test_deterministic');
    expect(dag.nodes).to.deep.equal([
      {
        id: 'process',
        agent: 'tier0_process',
        kind: 'agent',
        description: 'Trim the input text.',
        depends_on: [],
        tier: '0',
      },
      {
        id: 'count',
        agent: 'tier0_counter',
        kind: 'agent',
        description: 'Count the characters of the trimmed text.',
        depends_on: ['process'],
        tier: '0',
      },
      {
        id: 'report',
        agent: 'tier0_echo',
        kind: 'agent',
        description: 'Echo a summary line built from the previous steps.',
        depends_on: ['count'],
        tier: '0',
      },
    ]);
    expect(dag.edges).to.deep.equal([
      { source: 'process', target: 'count' },
      { source: 'count', target: 'report' },
    ]);
    expect(dag.inputs).to.deep.equal([
      {
        name: 'text',
        type: 'string',
        description: 'The text to process.',
        default: '  Hello, agentic runtime!  ',
        required: false,
        enum: null,
      },
      {
        name: 'label',
        type: 'string',
        description: 'A label carried into the summary.',
        default: 'smoke',
        required: false,
        enum: ['smoke', 'demo', 'ci'],
      },
    ]);
  });

  it('DAG tiers come from the agent prefix, as strings like GET /api/agents ("0" for tier 0)', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/code_review/dag');
    const nodes = (res.body as { nodes: { agent: string; tier: unknown }[] }).nodes;
    expect(nodes.map((node) => node.tier)).to.include('0');
    for (const node of nodes) expect(node.tier).to.equal(/^tier(\d)/.exec(node.agent)?.[1]);
  });

  it('GET /api/workflows/{name}/capabilities answers typed maps', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/test_deterministic/capabilities');
    expect(res.body).to.deep.equal({
      workflow: 'test_deterministic',
      capabilities: {
        inputs: {
          text: { type: 'string', description: 'The text to process.' },
          label: { type: 'string', description: 'A label carried into the summary.' },
        },
        outputs: { processed: { type: 'any' }, length: { type: 'any' }, summary: { type: 'any' } },
      },
    });
  });

  it('GET /api/workflows/{name}/machine answers the compiled graph machine JSON', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/test_deterministic/machine');
    expect(res.status).to.equal(200);
    const text = JSON.stringify(res.body);
    for (const step of ['process', 'count', 'report']) expect(text).to.include(step);
  });

  it('GET /api/workflows/{name}/machine JSON loads back with createMachine and runs the workflow', async () => {
    const res = await call(svc.url, 'GET', '/api/workflows/test_deterministic/machine');
    const yaml = await readFile(join(svc.workflowsDir, 'test_deterministic.yaml'), 'utf8');
    const wf = compileWorkflow(parseWorkflowYaml(yaml));
    const machine = createMachine(res.body as never).provide(graphImplementations() as never);
    const input: EngineInput = {
      runId: 'from-json',
      workflow: wf,
      inputs: { text: 'hello' },
      maxConcurrency: 10,
      maxAttempts: 1,
      runAttempt: ({ input: stepInput }) =>
        Promise.resolve({
          ok: true,
          output: { ...stepInput },
          error: null,
          modelUsed: null,
          tokensUsed: null,
          iterations: 1,
        }),
      retryDelayMs: () => 0,
      clock: { now: Date.now, setTimeout, clearTimeout },
    };
    const actor = createActor(machine, { input });
    const regions: unknown[] = [];
    const done = new Promise<void>((resolve, reject) =>
      actor.subscribe({
        next: (snapshot: AnyMachineSnapshot) => regions.push(snapshot.value),
        complete: resolve,
        error: reject,
      }),
    );
    actor.start();
    await done;
    expect(actor.getSnapshot().value).to.equal('completed');
    expect(regions.at(-2)).to.deep.equal({
      running: { process: 'success', count: 'success', report: 'success' },
    });
  });

  for (const path of ['dag', 'capabilities', 'machine', 'editor']) {
    it(`GET /api/workflows/{name}/${path} answers 404 {detail} for an unknown workflow`, async () => {
      const res = await call(svc.url, 'GET', `/api/workflows/nope/${path}`);
      expect(res.status).to.equal(404);
      expect(res.body).to.have.property('detail').that.is.a('string');
      const dotted = await call(svc.url, 'GET', `/api/workflows/..%2Fetc/${path}`);
      expect(dotted.status).to.equal(404);
    });
  }

  it('unknown /api paths answer JSON 404, wrong methods 405', async () => {
    const res = await call(svc.url, 'GET', '/api/nothing/here');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ detail: 'Not Found' });
    const wrong = await call(svc.url, 'DELETE', '/api/workflows');
    expect(wrong.status).to.equal(405);
    expect(wrong.body).to.have.property('detail');
  });
});
