/**
 * `GET /api/runs/{run_id}/explain` on a real service: one case per cause a step can wait for,
 * on both engines where the cause applies to both (the queue position is in
 * test/scale/explain-queue.test.ts, the CLI in test/e2e/cli-explain.test.ts).
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/engine/runtime.js';
import type { WorkflowEvent } from '../../src/engine/types.js';
import type {
  RunExplanationResponse,
  StepWait,
} from '../../src/generated/api/run-explanation-response.js';
import { startServer } from '../../src/http/server.js';
import { createSilentLogger } from '../../src/log.js';
import { acquireOwnerLease } from '../../src/store/owner.js';
import { runFileName } from '../../src/store/run-files.js';
import { startedRunRecord } from '../../src/store/run-record.js';
import { compileWorkflow } from '../../src/workflow/compile.js';
import { startFakeServer, type FakeServer } from '../fixtures/llm/fake-server.js';
import { call, startTestService, type TestService } from './harness.js';

const ENGINES = ['native', 'graph'] as const;

/** Every event of the service's runs, and a wait for the first that matches. */
function watchEvents(svc: Pick<TestService, 'runtime'>) {
  const seen: WorkflowEvent[] = [];
  const waiters = new Set<() => void>();
  const off = svc.runtime.subscribe((event) => {
    seen.push(event);
    for (const wake of waiters) wake();
  });
  return {
    off,
    until(match: (event: WorkflowEvent) => boolean): Promise<WorkflowEvent> {
      return new Promise((resolve) => {
        const check = (): void => {
          const found = seen.find(match);
          if (found === undefined) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

async function startRun(
  svc: { url: string },
  workflow: string,
  adapter: string,
  input: Record<string, unknown> = {},
): Promise<string> {
  const res = await call(svc.url, 'POST', '/api/run', { workflow, adapter, input_data: input });
  expect(res.status, res.text).to.equal(200);
  return (res.body as { run_id: string }).run_id;
}

async function explain(svc: { url: string }, runId: string): Promise<RunExplanationResponse> {
  const res = await call(svc.url, 'GET', `/api/runs/${runId}/explain`);
  expect(res.status, res.text).to.equal(200);
  return res.body as RunExplanationResponse;
}

function stepOf(answer: RunExplanationResponse, name: string) {
  const step = answer.steps.find((s) => s.step === name);
  expect(step, `${name} in ${JSON.stringify(answer)}`).to.not.equal(undefined);
  return step!;
}

function waitOf(answer: RunExplanationResponse, name: string, reason: StepWait['reason']) {
  const wait = stepOf(answer, name).waits.find((w) => w.reason === reason);
  expect(wait, `${reason} of ${name} in ${JSON.stringify(answer)}`).to.not.equal(undefined);
  return wait!;
}

const isStepStart = (runId: string, step: string) => (event: WorkflowEvent) =>
  event.run_id === runId && event.type === 'step_start' && event.step === step;
const isStepEnd = (runId: string, step: string) => (event: WorkflowEvent) =>
  event.run_id === runId && event.type === 'step_end' && event.step === step;

const CHAIN = `name: explain_chain
steps:
  - name: first
    agent: tier0_sleep
    inputs: { ms: 600000 }
  - name: second
    agent: tier0_echo
    depends_on: [first]
`;

const CHAIN_DOC = {
  name: 'explain_chain',
  steps: [
    { name: 'first', agent: 'tier0_sleep', inputs: { ms: 600000 } },
    { name: 'second', agent: 'tier0_echo', depends_on: ['first'] },
  ],
};

const CONDITION = `name: explain_when
inputs:
  mode: { type: string, default: quick }
steps:
  - name: gate
    agent: tier0_echo
    inputs: { n: 3 }
    outputs: { n: gate_n }
  - name: deep
    agent: tier0_echo
    depends_on: [gate]
    when: "\${inputs.mode} == 'deep' and \${steps.gate.outputs.n} > 1"
  - name: hold
    agent: tier0_sleep
    depends_on: [deep]
    inputs: { ms: 600000 }
`;

const LIMITED = `name: explain_limit
steps:
  - name: one
    agent: tier0_sleep
    inputs: { ms: 600000 }
  - name: two
    agent: tier0_sleep
    inputs: { ms: 600000 }
`;

const APPROVE = `name: explain_approve
steps:
  - name: save
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: note.txt, content: hello } }
`;

const MAP_APPROVE = `name: explain_map_approve
steps:
  - name: save_each
    for_each: [a.txt, b.txt]
    max_concurrency: 1
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: '\${item.value}', content: hello } }
`;

const FAILING = `name: explain_fail
steps:
  - name: ok
    agent: tier0_echo
  - name: boom
    agent: tier0_fail
    depends_on: [ok]
    inputs: { message: it broke }
  - name: after
    agent: tier0_echo
    depends_on: [boom]
`;

describe('GET /api/runs/{run_id}/explain', function () {
  this.timeout(60_000);
  let svc: TestService | undefined;
  let stop: (() => void) | undefined;
  let base: string | undefined;

  async function service(env: Record<string, string> = {}): Promise<TestService> {
    base = await mkdtemp(join(tmpdir(), 'agentic-explain-'));
    svc = await startTestService({
      env: { AGENTIC_APPROVAL_PROVIDER: 'http', AGENTIC_FILE_BASE_DIR: base, ...env },
    });
    for (const [name, text] of [
      ['explain_chain', CHAIN],
      ['explain_when', CONDITION],
      ['explain_limit', LIMITED],
      ['explain_approve', APPROVE],
      ['explain_fail', FAILING],
      ['explain_map_approve', MAP_APPROVE],
    ] as const)
      await writeFile(join(svc.workflowsDir, `${name}.yaml`), text);
    return svc;
  }

  afterEach(async () => {
    stop?.();
    stop = undefined;
    await svc?.dispose();
    svc = undefined;
    if (base !== undefined) await rm(base, { recursive: true, force: true });
    base = undefined;
  });

  /** Cancels a run and waits for its end, so the service shuts down with nothing running. */
  async function cancel(s: TestService, runId: string): Promise<void> {
    const res = await call(s.url, 'POST', `/api/runs/${runId}/cancel`);
    expect(res.status, res.text).to.equal(200);
    await s.finished(runId);
  }

  it('answers 404 {detail} for an unknown run', async () => {
    const s = await service();
    for (const id of ['no-such-run', 'bad%20id']) {
      const res = await call(s.url, 'GET', `/api/runs/${id}/explain`);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ detail: 'Run not found' });
    }
  });

  it('explains from its run file a run that says running but that no process here runs', async () => {
    // Another live process (an owner lease of this test) owns a running run in the directory.
    base = await mkdtemp(join(tmpdir(), 'agentic-explain-'));
    const runsDir = join(base, 'runs');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(runsDir);
    const other = await acquireOwnerLease({ runsDir, logger: createSilentLogger() });
    try {
      const workflow = compileWorkflow(CHAIN_DOC);
      const start = Date.UTC(2026, 0, 2);
      const record = startedRunRecord({
        runId: 'elsewhere-1',
        workflow,
        adapter: 'graph',
        inputs: {},
        startTime: start,
        extra: {},
      });
      record.owner = other.id;
      await writeFile(
        join(runsDir, runFileName(start, 'explain_chain', 'elsewhere-1')),
        JSON.stringify(record),
      );
      svc = await startTestService({ root: base });
      const answer = await explain(svc, 'elsewhere-1');
      expect(answer).to.deep.include({
        run_id: 'elsewhere-1',
        workflow: 'explain_chain',
        status: 'running',
        reason: 'not_active',
        source: 'record',
      });
      expect(answer.message).to.equal(
        `Run elsewhere-1 (explain_chain) is not active in this service: its run file says running, started 2026-01-02T00:00:00.000Z by ${other.id}. Its process is gone or it runs elsewhere; recovery ends a run whose owner is gone.`,
      );
    } finally {
      await other.release();
    }
  });

  for (const adapter of ENGINES) {
    describe(`${adapter} engine`, () => {
      it('names the unfinished dependencies a step waits for, with their states', async () => {
        const s = await service();
        const events = watchEvents(s);
        stop = events.off;
        const runId = await startRun(s, 'explain_chain', adapter);
        await events.until(isStepStart(runId, 'first'));
        const answer = await explain(s, runId);
        expect(answer).to.include({
          run_id: runId,
          workflow: 'explain_chain',
          status: 'running',
          reason: 'running',
          source: 'engine',
        });
        expect(stepOf(answer, 'first').status).to.equal('running');
        expect(waitOf(answer, 'first', 'running')).to.include({ attempt: 1, max_attempts: 1 });
        const second = stepOf(answer, 'second');
        expect(second.status).to.equal('pending');
        expect(second.waits).to.have.length(1);
        expect(second.waits[0]).to.deep.equal({
          reason: 'dependencies',
          message: 'waits for first (running) to finish',
          dependencies: [{ step: 'first', status: 'running' }],
        });
        expect(answer.message).to.equal(
          `Run ${runId} (explain_chain) is running: 0 of 2 steps finished; first is running; second waits for its dependencies.`,
        );
        await cancel(s, runId);
      });

      it('shows a false when: with the expression and the values it saw, live and from the run file', async () => {
        const s = await service();
        const events = watchEvents(s);
        stop = events.off;
        const runId = await startRun(s, 'explain_when', adapter, { mode: 'quick' });
        await events.until(isStepStart(runId, 'hold'));
        const expected = {
          reason: 'condition_false',
          expression: "${inputs.mode} == 'deep' and ${steps.gate.outputs.n} > 1",
          values: {
            'inputs.mode': 'quick',
            'steps.gate.status': 'success',
            'steps.gate.outputs': { n: 3 },
          },
        };
        const live = waitOf(await explain(s, runId), 'deep', 'condition_false');
        expect(live).to.deep.include(expected);
        expect(live.message).to.equal(
          `skipped: its when: ${expected.expression} was false (it saw inputs.mode = "quick", steps.gate.status = "success" and steps.gate.outputs = {"n":3})`,
        );
        await cancel(s, runId);
        const ended = await explain(s, runId);
        expect(ended).to.include({ source: 'record', reason: 'finished', status: 'failed' });
        expect(waitOf(ended, 'deep', 'condition_false')).to.deep.include(expected);
      });

      it('holds a ready step at the run concurrency limit', async () => {
        const s = await service({ AGENTIC_MAX_CONCURRENCY: '1' });
        const events = watchEvents(s);
        stop = events.off;
        const runId = await startRun(s, 'explain_limit', adapter);
        await events.until(isStepStart(runId, 'one'));
        const answer = await explain(s, runId);
        expect(answer).to.include({ running_steps: 1, max_concurrency: 1 });
        expect(stepOf(answer, 'two').status).to.equal('pending');
        expect(waitOf(answer, 'two', 'concurrency_limit')).to.deep.equal({
          reason: 'concurrency_limit',
          message:
            'ready, but the run already runs 1 step, its limit (max_concurrency 1); it starts when one finishes',
          running_steps: 1,
          max_concurrency: 1,
        });
        await cancel(s, runId);
      });

      it('shows a pending approval: since when, and who can answer it', async () => {
        const s = await service();
        const events = watchEvents(s);
        stop = events.off;
        const before = Date.now();
        const runId = await startRun(s, 'explain_approve', adapter);
        const required = (await events.until(
          (event) => event.run_id === runId && event.type === 'approval_required',
        )) as Extract<WorkflowEvent, { type: 'approval_required' }>;
        const answer = await explain(s, runId);
        const save = stepOf(answer, 'save');
        expect(save.status).to.equal('awaiting_approval');
        const wait = waitOf(answer, 'save', 'approval');
        expect(wait).to.include({ call_id: required.call_id, tool_name: 'file_write' });
        expect(Date.parse(wait.since!)).to.be.within(before - 1, Date.now());
        expect(wait.answer).to.equal(
          `anyone with the service's API key answers it: POST /api/approvals/${required.call_id} or agentic approvals approve|deny ${required.call_id}`,
        );
        expect(wait.message).to.include(`tool call file_write (${required.call_id}) has waited`);
        const denied = await call(s.url, 'POST', `/api/approvals/${required.call_id}`, {
          decision: 'deny',
        });
        expect(denied.status, denied.text).to.equal(200);
        await s.finished(runId);
      });

      it("shows a map item's pending approval as its map step's wait", async () => {
        const s = await service();
        const events = watchEvents(s);
        stop = events.off;
        const runId = await startRun(s, 'explain_map_approve', adapter);
        const required = (await events.until(
          (event) => event.run_id === runId && event.type === 'approval_required',
        )) as Extract<WorkflowEvent, { type: 'approval_required' }>;
        const answer = await explain(s, runId);
        expect(stepOf(answer, 'save_each').status).to.equal('awaiting_approval');
        expect(waitOf(answer, 'save_each', 'approval')).to.include({
          call_id: required.call_id,
          tool_name: 'file_write',
        });
        const denied = await call(s.url, 'POST', `/api/approvals/${required.call_id}`, {
          decision: 'deny',
        });
        expect(denied.status, denied.text).to.equal(200);
        await s.finished(runId);
      });

      it('explains a finished run: its status and failed step, nothing waiting', async () => {
        const s = await service();
        const runId = await startRun(s, 'explain_fail', adapter);
        await s.finished(runId);
        const answer = await explain(s, runId);
        expect(answer).to.deep.include({
          run_id: runId,
          workflow: 'explain_fail',
          status: 'failed',
          reason: 'finished',
          source: 'record',
          failed_step: 'boom',
          error: "step 'boom' failed: it broke",
        });
        expect(answer.message).to.match(/has ended: it failed at step boom.*Nothing waits\.$/);
        expect(answer.steps).to.deep.equal([
          {
            step: 'boom',
            status: 'failed',
            waits: [{ reason: 'failed', message: 'failed: it broke', error: 'it broke' }],
          },
          {
            step: 'after',
            status: 'skipped',
            waits: [
              {
                reason: 'skipped',
                message: 'skipped: dependency failed: boom',
                skip_reason: 'dependency failed: boom',
              },
            ],
          },
        ]);
        const ok = await explain(
          s,
          await startRun(s, 'explain_chain', adapter).then(async (id) => {
            await cancel(s, id);
            return id;
          }),
        );
        expect(ok).to.include({ reason: 'finished', status: 'failed', error: 'cancelled' });
      });
    });
  }
});

const RETRY = `name: explain_retry
steps:
  - name: flaky
    agent: tier0_fail
    max_attempts: 50
    inputs: { message: not yet }
`;

describe('GET /api/runs/{run_id}/explain: retry backoff', function () {
  this.timeout(60_000);
  let root: string | undefined;
  let close: (() => Promise<void>) | undefined;

  afterEach(async () => {
    await close?.();
    close = undefined;
    if (root !== undefined) await rm(root, { recursive: true, force: true });
    root = undefined;
  });

  for (const adapter of ENGINES) {
    it(`shows the time left before the next attempt (${adapter} engine)`, async () => {
      root = await mkdtemp(join(tmpdir(), 'agentic-explain-retry-'));
      const workflowsDir = join(root, 'workflows');
      const runsDir = join(root, 'runs');
      const { mkdir } = await import('node:fs/promises');
      await mkdir(workflowsDir);
      await writeFile(join(workflowsDir, 'explain_retry.yaml'), RETRY);
      const config = loadConfig({
        AGENTIC_HOST: '127.0.0.1',
        AGENTIC_PORT: '0',
        AGENTIC_RUNS_DIR: runsDir,
        AGENTIC_WORKFLOWS_DIR: workflowsDir,
        AGENTIC_FRONTEND_DIR: join(root, 'frontend'),
        AGENTIC_NO_LLM: '1',
        AGENTIC_SHUTDOWN_GRACE_SECONDS: '0',
      });
      // Backoffs up to 30 s (full jitter): the step spends its time between attempts waiting.
      const runtime = createRuntime({ workflowsDir, runsDir, noLlm: true, retryBaseMs: 30_000 });
      const running = await startServer({ config, logger: createSilentLogger(), runtime });
      close = () => running.close();
      const events = watchEvents(running);
      const runId = await startRun(running, 'explain_retry', adapter);
      await events.until(
        (event) =>
          event.run_id === runId && event.type === 'step_error' && event.status === 'retrying',
      );
      const answer = await explain(running, runId);
      const flaky = stepOf(answer, 'flaky');
      expect(flaky.status).to.equal('retrying');
      const wait = waitOf(answer, 'flaky', 'retry_backoff');
      expect(wait.max_attempts).to.equal(50);
      expect(wait.attempt).to.be.at.least(1);
      expect(wait.retry_in_ms).to.be.within(0, 30_000 * 2 ** (wait.attempt! - 1));
      expect(Date.parse(wait.retry_at!)).to.be.a('number').and.not.NaN;
      expect(wait.message).to.match(
        new RegExp(
          `^attempt ${wait.attempt} of 50 failed; the next one starts in .+ \\(backoff, at `,
        ),
      );
      expect(runtime.cancel(runId)).to.equal(true);
      await events.until((event) => event.run_id === runId && event.type === 'workflow_end');
      events.off();
    });
  }
});

/** An OpenAI-compatible provider that answers every chat with a 500. */
function failing(_request: unknown, res: ServerResponse): void {
  res.writeHead(500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: 'upstream down', type: 'server_error' } }));
}

const BREAKER = `name: explain_breaker
steps:
  - name: first
    agent: tier1_analyst
  - name: hold
    agent: tier0_sleep
    inputs: { ms: 600000 }
  - name: second
    agent: tier1_analyst
    depends_on: [hold]
`;

describe('GET /api/runs/{run_id}/explain: an open circuit breaker (fake provider)', function () {
  this.timeout(60_000);
  let svc: TestService | undefined;
  let provider: FakeServer | undefined;
  let stop: (() => void) | undefined;

  afterEach(async () => {
    stop?.();
    await svc?.dispose();
    await provider?.close();
    svc = undefined;
    provider = undefined;
  });

  for (const adapter of ENGINES) {
    it(`names the open breaker of a step's tier (${adapter} engine)`, async () => {
      provider = await startFakeServer(failing);
      svc = await startTestService({
        env: {
          AGENTIC_NO_LLM: '0',
          OPENAI_BASE_URL: `${provider.url}/v1`,
          OPENAI_API_KEY: 'sk-explain-test-0123456789',
          AGENTIC_MODEL_TIER_1: 'openai:gpt-explain',
          AGENTIC_LLM_BREAKER_THRESHOLD: '1',
          AGENTIC_LLM_BREAKER_COOLDOWN_SECONDS: '600',
        },
      });
      await writeFile(join(svc.workflowsDir, 'explain_breaker.yaml'), BREAKER);
      const events = watchEvents(svc);
      stop = events.off;
      const runId = await startRun(svc, 'explain_breaker', adapter);
      await events.until(isStepEnd(runId, 'first'));
      const answer = await explain(svc, runId);
      const second = stepOf(answer, 'second');
      expect(second.status).to.equal('pending');
      expect(second.waits.map((w) => w.reason)).to.deep.equal(['dependencies', 'circuit_open']);
      const open = waitOf(answer, 'second', 'circuit_open');
      expect(open.tier).to.equal(1);
      expect(open.breakers).to.have.length(1);
      expect(open.breakers![0]).to.include({ model: 'openai:gpt-explain', state: 'open' });
      expect(open.breakers![0]!.retry_in_ms).to.be.within(1, 600_000);
      expect(open.message).to.match(
        /^the circuit breaker of model openai:gpt-explain is open \(a trial call in .+\) on tier 1: calls to it are refused meanwhile$/,
      );
      // A failed step explains how it ended, not a breaker.
      expect(stepOf(answer, 'first').waits.map((w) => w.reason)).to.deep.equal(['failed']);
      const res = await call(svc.url, 'POST', `/api/runs/${runId}/cancel`);
      expect(res.status).to.equal(200);
      await svc.finished(runId);
    });
  }
});
