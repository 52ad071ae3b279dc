import { expect } from 'chai';
import { join } from 'node:path';
import { createRuntime } from '../../../src/engine/runtime.js';
import type { PendingRequest } from '../../../src/engine/runtime-approvals.js';
import type { Runtime, RuntimeOptions, WorkflowEvent } from '../../../src/engine/types.js';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import { createLlmRouter } from '../../../src/llm/router.js';
import type { WorkflowDocument } from '../../../src/workflow/types.js';
import { removeDir, tempDir, validateEvent } from '../../conformance/helpers.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
} from '../../fixtures/llm/fake-server.js';

/** One LLM step: `tierN_writer`, depending on `after`. */
function llmStep(name: string, tier: number, after: string[] = []): Record<string, unknown> {
  return {
    name,
    agent: `tier${tier}_writer`,
    description: `Write part ${name}.`,
    ...(after.length === 0 ? {} : { depends_on: after }),
  };
}

function workflow(
  name: string,
  steps: Record<string, unknown>[],
  budget?: Record<string, unknown>,
): WorkflowDocument {
  return {
    name,
    steps,
    ...(budget === undefined ? {} : { budget }),
  } as unknown as WorkflowDocument;
}

interface Body {
  model: string;
  max_tokens?: number;
}

const bodyOf = (request: RecordedRequest): Body => request.body as Body;

/** Waits until `predicate` holds for one of the events seen (or seen from now on). */
function eventWaiter(runtime: Runtime) {
  const seen: WorkflowEvent[] = [];
  const waiters: {
    predicate: (e: WorkflowEvent) => boolean;
    resolve: (e: WorkflowEvent) => void;
  }[] = [];
  const off = runtime.subscribe((event) => {
    seen.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  });
  return {
    seen,
    off,
    until(predicate: (e: WorkflowEvent) => boolean): Promise<WorkflowEvent> {
      const found = seen.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

const isBudgetAsk = (event: WorkflowEvent): boolean =>
  event.type === 'approval_required' && event.kind === 'budget';

describe('run budgets (fake OpenAI-compatible provider)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let http: HttpClient;
  const runtimes: Runtime[] = [];

  /** Every call answers with `usage` tokens, as the model it was asked for. */
  const answerWith = (usage: { prompt: number; completion: number }) =>
    server.handle((request, res) =>
      sendJson(res, 200, openAiAnswer('ok', { model: bodyOf(request).model, usage })),
    );

  const make = (options: RuntimeOptions = {}): Runtime => {
    const router = createLlmRouter({
      providers: {
        get: (name) =>
          name === 'fake'
            ? createOpenAiCompatibleProvider({
                name: 'fake',
                http,
                chatUrl: () => `${server.url}/v1/chat/completions`,
                modelsUrl: `${server.url}/v1/models`,
                headers: {},
              })
            : undefined,
        missing: () => 'not configured',
      },
      chains: { '1': ['fake:tier1-model'], '2': ['fake:tier2-model'], '3': ['fake:tier3-model'] },
    });
    const runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: join(dir, 'wf'),
      llm: router,
      maxAttempts: 1,
      // A stopped runtime's runs are resumed by the next one once its lease has lapsed.
      ownerLeaseMs: 500,
      ...options,
    });
    runtimes.push(runtime);
    return runtime;
  };

  beforeEach(async () => {
    dir = await tempDir('agentic-budgets-');
    server = await startFakeServer();
    http = createHttpClient({ provider: 'fake' });
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.shutdown({ graceMs: 1000 });
    await http.close();
    await server.close();
    await removeDir(dir);
  });

  it('steps an LLM step down its tier once the run has spent the step-down share of its budget', async () => {
    answerWith({ prompt: 300, completion: 300 });
    const runtime = make();
    const record = await runtime.run({
      workflow: workflow('step_down', [llmStep('first', 3), llmStep('second', 3, ['first'])], {
        max_tokens: 1000,
        step_down_at: 0.5,
      }),
    });
    expect(record.status).to.equal('success');
    expect(server.requests.map((request) => bodyOf(request).model)).to.deep.equal([
      'tier3-model',
      'tier2-model',
    ]);
    expect(record.steps.map((step) => step.model_used)).to.deep.equal([
      'fake:tier3-model',
      'fake:tier2-model',
    ]);
    // A budgeted run's calls carry their output bound (the reserved worst case).
    expect(bodyOf(server.requests[0]!).max_tokens).to.equal(4096);
    expect(record.extra?.budget).to.deep.include({
      max_tokens: 1000,
      on_exceeded: 'pause',
      step_down_at: 0.5,
      spent: { tokens: 1200, cost_usd: null },
    });
  });

  it('pauses before the next model call at the budget, asks with approval_required kind budget, and goes on once raised', async () => {
    answerWith({ prompt: 400, completion: 200 });
    const runtime = make();
    const events = eventWaiter(runtime);
    const handle = await runtime.start({
      workflow: workflow('pause', [llmStep('first', 1), llmStep('second', 1, ['first'])], {
        max_tokens: 500,
      }),
    });
    const asked = await events.until(isBudgetAsk);
    expect(validateEvent(asked), JSON.stringify(validateEvent.errors)).to.equal(true);
    expect(asked).to.deep.include({
      type: 'approval_required',
      run_id: handle.runId,
      step: 'second',
      tool_name: 'budget',
      kind: 'budget',
      spent: { tokens: 600, cost_usd: null },
      budget: { max_tokens: 500 },
    });
    expect(server.requests).to.have.length(1);
    const pending = runtime.approvals.pending();
    expect(pending).to.have.length(1);
    const request = pending[0] as PendingRequest;
    expect(request).to.deep.include({
      callId: (asked as { call_id: string }).call_id,
      runId: handle.runId,
      step: 'second',
      kind: 'budget',
      toolName: 'budget',
    });
    // A raise that does not clear what is spent changes nothing.
    expect(await runtime.approvals.raise(request.callId, { maxTokens: 600 })).to.deep.equal({
      invalid: 'max_tokens 600 is not above the 600 tokens the run has spent',
    });
    expect(runtime.approvals.respond(request.callId, { any: 1 })).to.have.property('invalid');
    expect(await runtime.approvals.raise(request.callId, { maxTokens: 5000 })).to.equal('decided');
    expect(await runtime.approvals.raise(request.callId, { maxTokens: 9000 })).to.equal(
      'already_decided',
    );
    expect(await runtime.approvals.raise('no-such-id', { maxTokens: 9000 })).to.equal('unknown');
    const record = await handle.done;
    expect(record.status).to.equal('success');
    expect(server.requests).to.have.length(2);
    const decision = events.seen.find(
      (event) => event.type === 'approval_decision' && event.kind === 'budget',
    );
    expect(decision).to.deep.include({
      decision: 'approve',
      call_id: request.callId,
      budget: { max_tokens: 5000 },
    });
    expect(record.extra?.budget).to.deep.include({ max_tokens: 5000 });
    events.off();
  });

  it('holds a cost budget with the calls priced: pauses at max_cost_usd and goes on once raised', async () => {
    answerWith({ prompt: 400, completion: 200 });
    // $1 per thousand tokens: a call of 600 tokens costs $0.60.
    const runtime = make({ budgets: { price: (_model, usage) => usage.total / 1000 } });
    const events = eventWaiter(runtime);
    const handle = await runtime.start({
      workflow: workflow('priced', [llmStep('first', 1), llmStep('second', 1, ['first'])], {
        max_cost_usd: 0.5,
      }),
    });
    const asked = (await events.until(isBudgetAsk)) as { call_id: string };
    expect(asked).to.deep.include({
      spent: { tokens: 600, cost_usd: 0.6 },
      budget: { max_cost_usd: 0.5 },
    });
    expect(await runtime.approvals.raise(asked.call_id, { maxCostUsd: 0.6 })).to.have.property(
      'invalid',
    );
    expect(await runtime.approvals.raise(asked.call_id, { maxCostUsd: 2 })).to.equal('decided');
    const record = await handle.done;
    expect(record.status).to.equal('success');
    expect(record.extra?.budget).to.deep.include({
      max_cost_usd: 2,
      spent: { tokens: 1200, cost_usd: 1.2 },
    });
    events.off();
  });

  it('fails the run with budget_exceeded by policy (on_exceeded: fail), calling no model past it', async () => {
    answerWith({ prompt: 400, completion: 200 });
    const runtime = make();
    const record = await runtime.run({
      workflow: workflow('fail', [llmStep('first', 1), llmStep('second', 1, ['first'])], {
        max_tokens: 500,
        on_exceeded: 'fail',
      }),
    });
    expect(record.status).to.equal('failed');
    expect(server.requests).to.have.length(1);
    expect(record.steps[1]!.status).to.equal('failed');
    expect(record.steps[1]!.error).to.match(/^budget_exceeded: /);
    expect(record.error).to.match(/budget_exceeded/);
  });

  it('a denied budget request fails the run with budget_exceeded', async () => {
    answerWith({ prompt: 400, completion: 200 });
    const runtime = make();
    const events = eventWaiter(runtime);
    const handle = await runtime.start({
      workflow: workflow('deny', [llmStep('first', 1), llmStep('second', 1, ['first'])], {
        max_tokens: 500,
      }),
    });
    const asked = (await events.until(isBudgetAsk)) as { call_id: string };
    expect(runtime.approvals.answer(asked.call_id, false, 'enough')).to.equal('decided');
    const record = await handle.done;
    expect(record.status).to.equal('failed');
    expect(record.steps[1]!.error).to.match(/^budget_exceeded: /);
    events.off();
  });

  it('never lets concurrent steps overrun the budget by more than one call', async () => {
    // Each call: 40 prompt + 60 completion tokens; 8 independent steps; room for 2.5 calls.
    answerWith({ prompt: 40, completion: 60 });
    const runtime = make({ budgets: { callMaxTokens: 60 } });
    const steps = Array.from({ length: 8 }, (_, i) => llmStep(`part${i}`, 1));
    const record = await runtime.run({
      workflow: workflow('concurrent', steps, { max_tokens: 250, on_exceeded: 'fail' }),
    });
    const spent = record.steps.reduce((sum, step) => sum + (step.tokens_used?.total ?? 0), 0);
    expect(spent).to.be.at.most(250 + 100);
    expect(server.requests.length).to.be.at.most(3);
    expect(server.requests.every((request) => bodyOf(request).max_tokens === 60)).to.equal(true);
    const refused = record.steps.filter((step) => /^budget_exceeded: /.test(step.error ?? ''));
    expect(refused.length).to.equal(8 - server.requests.length);
  });

  it("holds a map step's concurrent items to the run's budget", async () => {
    answerWith({ prompt: 40, completion: 60 });
    const runtime = make({ budgets: { callMaxTokens: 60 } });
    const record = await runtime.run({
      workflow: workflow(
        'mapped',
        [
          {
            name: 'parts',
            for_each: [1, 2, 3, 4, 5, 6, 7, 8],
            max_concurrency: 8,
            on_item_failure: 'collect',
            agent: 'tier1_writer',
            description: 'Write a part.',
            inputs: { part: '${item.value}' },
          },
        ],
        { max_tokens: 250, on_exceeded: 'fail' },
      ),
    });
    const spent = record.steps[0]!.tokens_used?.total ?? 0;
    expect(spent).to.be.at.most(250 + 100);
    expect(server.requests.length).to.be.at.most(3);
    const output = record.steps[0]!.output as { failed: number };
    expect(output.failed).to.equal(8 - server.requests.length);
  });

  it("takes the run request's budget where it is stricter than the workflow's", async () => {
    answerWith({ prompt: 400, completion: 200 });
    const runtime = make();
    const record = await runtime.run({
      workflow: workflow('stricter', [llmStep('first', 1), llmStep('second', 1, ['first'])], {
        max_tokens: 100_000,
        max_cost_usd: 5,
      }),
      budget: { maxTokens: 500, maxCostUsd: 10, onExceeded: 'fail' },
    });
    expect(record.status).to.equal('failed');
    expect(server.requests).to.have.length(1);
    expect(record.extra?.budget).to.deep.include({
      max_tokens: 500,
      max_cost_usd: 5,
      on_exceeded: 'fail',
    });
  });

  it("counts a sub-workflow child's spend against its parent's budget", async () => {
    answerWith({ prompt: 400, completion: 200 });
    const runtime = make();
    const { writeFile, mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'wf'), { recursive: true });
    await writeFile(
      join(dir, 'wf', 'child_writer.yaml'),
      'name: child_writer\nsteps:\n  - name: write\n    agent: tier1_writer\n    description: Write.\n',
    );
    const record = await runtime.run({
      workflow: workflow(
        'parent',
        [{ name: 'child', workflow: 'child_writer' }, llmStep('after', 1, ['child'])],
        { max_tokens: 500, on_exceeded: 'fail' },
      ),
    });
    expect(record.status).to.equal('failed');
    expect(server.requests).to.have.length(1);
    expect(record.steps[1]!.error).to.match(/^budget_exceeded: /);
  });

  it('a run paused at its budget pauses again after a restart with its spend from the run file, and finishes once raised', async () => {
    answerWith({ prompt: 400, completion: 200 });
    const { writeFile, mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'wf'), { recursive: true });
    await writeFile(
      join(dir, 'wf', 'paused_restart.yaml'),
      [
        'name: paused_restart',
        'budget: {max_tokens: 500}',
        'steps:',
        '  - {name: first, agent: tier1_writer, description: Write.}',
        '  - {name: second, agent: tier1_writer, description: Write more., depends_on: [first]}',
        '',
      ].join('\n'),
    );
    const first = make();
    const events = eventWaiter(first);
    const handle = await first.start({
      workflow: 'paused_restart',
      input: {},
    });
    const asked = (await events.until(isBudgetAsk)) as { call_id: string };
    events.off();
    // The process stops while the run waits: its file is left running for the next start.
    await first.shutdown({ graceMs: 0 });
    runtimes.splice(runtimes.indexOf(first), 1);

    const second = make();
    const again = eventWaiter(second);
    const resumedAsk = (await again.until(isBudgetAsk)) as { call_id: string; spent: unknown };
    expect(resumedAsk.call_id).to.equal(asked.call_id);
    expect(resumedAsk.spent).to.deep.equal({ tokens: 600, cost_usd: null });
    expect(server.requests).to.have.length(1);
    expect(await second.approvals.raise(asked.call_id, { maxTokens: 2000 })).to.equal('decided');
    const end = await again.until(
      (event) => event.type === 'workflow_end' && event.run_id === handle.runId,
    );
    expect(end).to.deep.include({ status: 'success' });
    expect(server.requests).to.have.length(2);
    again.off();
  });
});
