import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { WorkflowEvent } from '../../src/engine/types.js';
import type { ApprovalsResponse } from '../../src/generated/api/approvals-response.js';
import type { RunExplanationResponse } from '../../src/generated/api/run-explanation-response.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { call, startTestService, type TestService } from './harness.js';
import { packageRoot } from '../../src/config/index.js';

// The CLI from source, as test/e2e/cli-approvals.test.ts runs it.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;
const CLI = ['--import', TSX, join(packageRoot, 'src', 'cli.ts')];

const PAIR = [
  'name: budget_pair',
  'budget: {max_tokens: 100000}',
  'steps:',
  '  - {name: first, agent: tier1_writer, description: Write.}',
  '  - {name: second, agent: tier1_writer, description: Write more., depends_on: [first]}',
  '',
].join('\n');

describe('run budgets over HTTP (POST /api/run budget, GET/POST /api/approvals, explain)', function () {
  this.timeout(60_000);
  let svc: TestService | undefined;
  let provider: FakeServer | undefined;

  afterEach(async () => {
    await svc?.dispose();
    await provider?.close();
    svc = undefined;
    provider = undefined;
  });

  async function start(env: Record<string, string> = {}): Promise<TestService> {
    provider = await startFakeServer((request, res) => {
      // The service's model probe lists the models; every chat call spends 600 tokens.
      if (request.method === 'GET') return sendJson(res, 200, { data: [{ id: 'gpt-budget' }] });
      const model = (request.body as { model: string }).model;
      sendJson(res, 200, openAiAnswer('ok', { model, usage: { prompt: 400, completion: 200 } }));
    });
    svc = await startTestService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${provider.url}/v1`,
        OPENAI_API_KEY: 'sk-budget-test-0123456789',
        AGENTIC_MODEL_TIER_1: 'openai:gpt-budget',
        AGENTIC_BUDGET_CALL_MAX_TOKENS: '300',
        ...env,
      },
    });
    await writeFile(join(svc.workflowsDir, 'budget_pair.yaml'), PAIR);
    return svc;
  }

  const chats = () => provider!.requests.filter((request) => request.method === 'POST');

  function budgetAsk(service: TestService, runId: string): Promise<WorkflowEvent> {
    return new Promise((resolve) => {
      const off = service.runtime.subscribe((event) => {
        if (event.run_id === runId && event.type === 'approval_required') {
          off();
          resolve(event);
        }
      });
    });
  }

  it('pauses a run at the budget its request gave (stricter than the workflow), lists it, answers 404/409/422 and raises it with 200', async () => {
    const service = await start();
    const runId = 'budget-http-1';
    const asked = budgetAsk(service, runId);
    const started = await call(service.url, 'POST', '/api/run', {
      workflow: 'budget_pair',
      run_id: runId,
      budget: { max_tokens: 500 },
    });
    expect(started.status).to.equal(200);
    const event = (await asked) as { call_id: string };
    expect(event).to.deep.include({
      kind: 'budget',
      tool_name: 'budget',
      step: 'second',
      spent: { tokens: 600, cost_usd: null },
      budget: { max_tokens: 500 },
    });
    expect(chats()).to.have.length(1);
    expect((chats()[0]!.body as { max_tokens: number }).max_tokens).to.equal(300);

    const listed = await call(service.url, 'GET', '/api/approvals');
    expect(listed.status).to.equal(200);
    const approvals = (listed.body as ApprovalsResponse).approvals;
    expect(approvals).to.have.length(1);
    expect(approvals[0]).to.deep.include({
      call_id: event.call_id,
      run_id: runId,
      workflow: 'budget_pair',
      step: 'second',
      tool_name: 'budget',
      kind: 'budget',
      spent: { tokens: 600, cost_usd: null },
      budget: { max_tokens: 500 },
    });

    const explained = await call(service.url, 'GET', `/api/runs/${runId}/explain`);
    expect(explained.status).to.equal(200);
    const explanation = explained.body as RunExplanationResponse;
    expect(explanation.reason).to.equal('awaiting_budget');
    const second = explanation.steps.find((step) => step.step === 'second')!;
    expect(second.status).to.equal('awaiting_budget');
    expect(second.waits[0]).to.deep.include({ reason: 'budget', call_id: event.call_id });

    const path = `/api/approvals/${event.call_id}`;
    const tooLow = await call(service.url, 'POST', path, { budget: { max_tokens: 600 } });
    expect(tooLow.status).to.equal(422);
    expect(JSON.stringify(tooLow.body)).to.contain('max_tokens 600 is not above the 600 tokens');
    const answer = await call(service.url, 'POST', path, { answer: { ok: true } });
    expect(answer.status).to.equal(422);
    const approve = await call(service.url, 'POST', path, { decision: 'approve' });
    expect(approve.status).to.equal(422);
    const both = await call(service.url, 'POST', path, {
      decision: 'deny',
      budget: { max_tokens: 5000 },
    });
    expect(both.status).to.equal(422);
    const unknown = await call(service.url, 'POST', '/api/approvals/nope', {
      budget: { max_tokens: 5000 },
    });
    expect(unknown.status).to.equal(404);

    const raised = await call(service.url, 'POST', path, { budget: { max_tokens: 5000 } });
    expect(raised.status).to.equal(200);
    expect(raised.body).to.deep.equal({
      call_id: event.call_id,
      decision: 'approve',
      budget: { max_tokens: 5000 },
    });
    const again = await call(service.url, 'POST', path, { budget: { max_tokens: 9000 } });
    expect(again.status).to.equal(409);

    const record = await service.finished(runId);
    expect(record.status).to.equal('success');
    expect(chats()).to.have.length(2);
    expect(record.extra?.budget).to.deep.include({
      max_tokens: 5000,
      spent: { tokens: 1200, cost_usd: null },
    });
  });

  it('prices calls with AGENTIC_PRICES_FILE and pauses a run at its max_cost_usd', async () => {
    const prices = join(await mkdtemp(join(tmpdir(), 'agentic-prices-')), 'prices.yaml');
    // $1,000 per million tokens: a call of 600 tokens costs $0.60.
    await writeFile(
      prices,
      'as_of: "2026-11-28"\ncurrency: USD\nmodels:\n  "openai:gpt-budget": { input: 1000, output: 1000 }\n',
    );
    const service = await start({ AGENTIC_PRICES_FILE: prices });
    const runId = 'budget-http-cost';
    const asked = budgetAsk(service, runId);
    const started = await call(service.url, 'POST', '/api/run', {
      workflow: 'budget_pair',
      run_id: runId,
      budget: { max_cost_usd: 0.5 },
    });
    expect(started.status).to.equal(200);
    const event = (await asked) as { call_id: string };
    expect(event).to.deep.include({
      spent: { tokens: 600, cost_usd: 0.6 },
      budget: { max_tokens: 100000, max_cost_usd: 0.5 },
    });
    const raised = await call(service.url, 'POST', `/api/approvals/${event.call_id}`, {
      budget: { max_cost_usd: 5 },
    });
    expect(raised.status).to.equal(200);
    const record = await service.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.extra?.budget).to.deep.include({
      max_cost_usd: 5,
      spent: { tokens: 1200, cost_usd: 1.2 },
    });
    await rm(dirname(prices), { recursive: true, force: true });
  });

  it('agentic approvals raise <call_id> --tokens N raises a paused run through the service', async () => {
    const service = await start();
    const runId = 'budget-http-cli';
    const asked = budgetAsk(service, runId);
    await call(service.url, 'POST', '/api/run', {
      workflow: 'budget_pair',
      run_id: runId,
      budget: { max_tokens: 500 },
    });
    const event = (await asked) as { call_id: string };
    const cli = (...args: string[]) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [...CLI, ...args], {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.on('close', (code) => resolve({ code, output }));
      });
    const low = await cli(
      'approvals',
      'raise',
      event.call_id,
      '--tokens',
      '100',
      '-u',
      service.url,
    );
    expect(low.code).to.not.equal(0);
    expect(low.output).to.contain('max_tokens 100 is not above the 600 tokens');
    const raised = await cli(
      'approvals',
      'raise',
      event.call_id,
      '--tokens',
      '5000',
      '-u',
      service.url,
    );
    expect(raised, raised.output).to.deep.include({ code: 0 });
    expect(raised.output).to.contain(`raised ${event.call_id}`);
    const record = await service.finished(runId);
    expect(record.status).to.equal('success');
  });

  it('rejects a bad budget in the run request with 422', async () => {
    const service = await start();
    const res = await call(service.url, 'POST', '/api/run', {
      workflow: 'budget_pair',
      budget: { max_tokens: 0 },
    });
    expect(res.status).to.equal(422);
  });

  it('fails the run with budget_exceeded when the request says on_exceeded: fail', async () => {
    const service = await start();
    const started = await call(service.url, 'POST', '/api/run', {
      workflow: 'budget_pair',
      run_id: 'budget-http-2',
      budget: { max_tokens: 500, on_exceeded: 'fail' },
    });
    expect(started.status).to.equal(200);
    const record = await service.finished('budget-http-2');
    expect(record.status).to.equal('failed');
    expect(record.steps[1]!.error).to.match(/^budget_exceeded: the run has spent 600 tokens/);
    expect(chats()).to.have.length(1);
  });
});
