/**
 * `GET /api/runs/{run_id}/explain` with Redis (a real redis-server): an api instance answers a
 * queued run's place in the worker queue, and once a worker has taken a run, that worker; a
 * process of role `all` explains the runs its own worker runs from their engine.
 */
import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import type { RunExplanationResponse } from '../../src/generated/api/run-explanation-response.js';
import type { WorkflowEvent } from '../../src/engine/types.js';
import { createSilentLogger } from '../../src/log.js';
import { startDispatch, type Dispatch } from '../../src/scale/dispatch.js';
import { createScaleKeys } from '../../src/scale/keys.js';
import { openRedis } from '../../src/scale/redis-connection.js';
import { attachRunPublisher } from '../../src/scale/run-publisher.js';
import { call, startTestService, type TestService } from '../http/harness.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';

const APPROVE = `name: approve_write
steps:
  - name: save
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: note.txt, content: hello } }
`;

const WAITING = `name: waiting
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 600000 } }
`;

const MAPPED = `name: mapped_slow
steps:
  - name: each
    for_each: [0, 0, 600000, 600000, 600000]
    as: ms
    max_concurrency: 2
    agent: tier0_sleep
    inputs: { ms: '\${item.ms}' }
`;

async function explain(url: string, runId: string): Promise<RunExplanationResponse> {
  const res = await call(url, 'GET', `/api/runs/${runId}/explain`);
  expect(res.status, res.text).to.equal(200);
  return res.body as RunExplanationResponse;
}

async function queue(svc: TestService, runId: string): Promise<void> {
  const res = await call(svc.url, 'POST', '/api/run', { workflow: 'waiting', run_id: runId });
  expect(res.status, res.text).to.equal(200);
}

describe('GET /api/runs/{run_id}/explain with Redis (worker queue)', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let svc: TestService | undefined;
  let worker: Dispatch | undefined;

  before(async () => {
    redis = await startTestRedis();
  });
  after(async () => {
    await redis.stop();
  });
  /** What a test started beside the service and the worker, to stop after them. */
  let alsoStop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await alsoStop?.();
    alsoStop = undefined;
    await worker?.close(0);
    worker = undefined;
    await svc?.dispose();
    svc = undefined;
  });

  it('answers the queue position of a queued run, then the worker that took it', async () => {
    svc = await startTestService({
      env: { REDIS_URL: redis.url, AGENTIC_ROLE: 'api', AGENTIC_REDIS_PREFIX: 'explain-api' },
    });
    await writeFile(join(svc.workflowsDir, 'waiting.yaml'), WAITING);
    await queue(svc, 'q-first');
    await queue(svc, 'q-second');

    expect(await explain(svc.url, 'q-first')).to.deep.equal({
      run_id: 'q-first',
      workflow: 'waiting',
      status: 'queued',
      reason: 'queued',
      source: 'queue',
      message:
        'Run q-first (waiting) waits in the worker queue: position 1 of 2 (the next run a worker takes). No worker has taken it yet: are workers running, and are they all busy?',
      queue: { position: 1, waiting: 2 },
      steps: [],
    });
    const second = await explain(svc.url, 'q-second');
    expect(second.queue).to.deep.equal({ position: 2, waiting: 2 });
    expect(second.message).to.include('position 2 of 2 (1 run ahead)');

    // A worker (one run at a time) takes the first run.
    const config = loadConfig({
      REDIS_URL: redis.url,
      AGENTIC_REDIS_PREFIX: 'explain-api',
      AGENTIC_ROLE: 'worker',
      AGENTIC_WORKER_CONCURRENCY: '1',
      AGENTIC_RUNS_DIR: svc.runsDir,
      AGENTIC_WORKFLOWS_DIR: svc.workflowsDir,
      AGENTIC_NO_LLM: '1',
    });
    const logger = createSilentLogger();
    const started = new Promise<void>((resolve) => {
      worker = startDispatch({
        config,
        logger,
        runtime: { workflowsDir: svc!.workflowsDir, runsDir: svc!.runsDir, noLlm: true, logger },
      });
      worker.executor.subscribe((event: WorkflowEvent) => {
        if (event.type === 'step_start' && event.run_id === 'q-first') resolve();
      });
    });
    await started;
    const taken = await explain(svc.url, 'q-first');
    expect(taken).to.include({ status: 'running', reason: 'on_worker', source: 'queue' });
    expect(taken.worker).to.be.a('string').and.not.equal('');
    expect(taken.message).to.equal(
      `Run q-first (waiting) runs on worker ${taken.worker!}; its steps are known there (its events stream through GET /api/runs/q-first/stream).`,
    );
    expect((await explain(svc.url, 'q-second')).queue).to.deep.equal({ position: 1, waiting: 1 });
  });

  it('shows the pending approval of a run on a worker, answerable from the api instance', async () => {
    svc = await startTestService({
      env: {
        REDIS_URL: redis.url,
        AGENTIC_ROLE: 'api',
        AGENTIC_REDIS_PREFIX: 'explain-approve',
        AGENTIC_APPROVAL_PROVIDER: 'http',
      },
    });
    await writeFile(join(svc.workflowsDir, 'approve_write.yaml'), APPROVE);
    const config = loadConfig({
      REDIS_URL: redis.url,
      AGENTIC_REDIS_PREFIX: 'explain-approve',
      AGENTIC_ROLE: 'worker',
      AGENTIC_RUNS_DIR: svc.runsDir,
      AGENTIC_WORKFLOWS_DIR: svc.workflowsDir,
      AGENTIC_NO_LLM: '1',
    });
    const logger = createSilentLogger();
    const files = join(svc.root, 'files');
    await mkdir(files);
    let asked!: (event: WorkflowEvent) => void;
    const required = new Promise<WorkflowEvent>((resolve) => (asked = resolve));
    worker = startDispatch({
      config,
      logger,
      runtime: {
        workflowsDir: svc.workflowsDir,
        runsDir: svc.runsDir,
        noLlm: true,
        logger,
        tools: { approval: 'http', fileBaseDir: files },
      },
    });
    worker.executor.subscribe((event: WorkflowEvent) => {
      if (event.type === 'approval_required') asked(event);
    });
    const res = await call(svc.url, 'POST', '/api/run', {
      workflow: 'approve_write',
      run_id: 'w-approve',
    });
    expect(res.status, res.text).to.equal(200);
    const event = (await required) as Extract<WorkflowEvent, { type: 'approval_required' }>;
    // The worker mirrors its waiting calls into Redis after the event: wait until the api
    // instance lists this one (each look is a request; no timer).
    for (let listed = false; !listed;) {
      const approvals = await call(svc.url, 'GET', '/api/approvals');
      listed = JSON.stringify(approvals.body).includes(event.call_id);
    }
    const answer = await explain(svc.url, 'w-approve');
    expect(answer).to.include({ status: 'running', reason: 'on_worker', source: 'queue' });
    expect(answer.message).to.match(/; save waits for an approval\.$/);
    expect(answer.steps).to.have.length(1);
    expect(answer.steps[0]).to.include({ step: 'save', status: 'awaiting_approval' });
    expect(answer.steps[0]!.waits[0]).to.include({
      reason: 'approval',
      call_id: event.call_id,
      tool_name: 'file_write',
    });
    const denied = await call(svc.url, 'POST', `/api/approvals/${event.call_id}`, {
      decision: 'deny',
    });
    expect(denied.status, denied.text).to.equal(200);
  });

  it("counts the items of a running map step of a run on a worker (from the run's event stream)", async () => {
    svc = await startTestService({
      env: { REDIS_URL: redis.url, AGENTIC_ROLE: 'api', AGENTIC_REDIS_PREFIX: 'explain-map' },
    });
    await writeFile(join(svc.workflowsDir, 'mapped_slow.yaml'), MAPPED);
    const config = loadConfig({
      REDIS_URL: redis.url,
      AGENTIC_REDIS_PREFIX: 'explain-map',
      AGENTIC_ROLE: 'worker',
      AGENTIC_RUNS_DIR: svc.runsDir,
      AGENTIC_WORKFLOWS_DIR: svc.workflowsDir,
      AGENTIC_NO_LLM: '1',
    });
    const logger = createSilentLogger();
    let framed!: () => void;
    const twoDone = new Promise<void>((resolve) => (framed = resolve));
    worker = startDispatch({
      config,
      logger,
      runtime: { workflowsDir: svc.workflowsDir, runsDir: svc.runsDir, noLlm: true, logger },
    });
    worker.executor.subscribe((event: WorkflowEvent) => {
      if (event.type === 'step_complete' && event.items?.done === 2) framed();
    });
    // The worker's events go to the runs' Redis streams, as the worker service sends them.
    const publishing = openRedis({ url: redis.url, logger, name: 'test-publisher' });
    const detach = attachRunPublisher(worker.executor, {
      redis: publishing,
      keys: createScaleKeys('explain-map'),
      streamTtlMs: 60_000,
      instanceId: 'test-worker',
      logger,
    });
    alsoStop = async () => {
      detach();
      await publishing.quit();
    };
    const res = await call(svc.url, 'POST', '/api/run', {
      workflow: 'mapped_slow',
      run_id: 'w-map',
    });
    expect(res.status, res.text).to.equal(200);
    await twoDone;
    // The frame reaches the run's Redis stream a moment after the worker's event: each look is a
    // request (no timer) until the api instance reads it there.
    let answer = await explain(svc.url, 'w-map');
    for (let looks = 0; answer.steps.length === 0 && looks < 500; looks++)
      answer = await explain(svc.url, 'w-map');
    expect(answer).to.include({ status: 'running', reason: 'on_worker', source: 'queue' });
    expect(answer.steps).to.have.length(1);
    expect(answer.steps[0]).to.deep.include({
      step: 'each',
      status: 'running',
      // As of the latest item frame: item 1 had just ended, item 2 not yet started.
      items: { total: 5, done: 2, failed: 0, running: 1, pending: 2 },
    });
    expect(answer.steps[0]!.waits[0]!.message).to.equal(
      'running on the worker; items: 2 of 5 done, 0 failed, 1 running, 2 pending',
    );
    expect(answer.message).to.include('; each: items 2 of 5 done');
  });

  it('explains the runs of its own worker from their engine (role all)', async () => {
    svc = await startTestService({
      env: {
        REDIS_URL: redis.url,
        AGENTIC_ROLE: 'all',
        AGENTIC_REDIS_PREFIX: 'explain-all',
        AGENTIC_WORKER_CONCURRENCY: '1',
      },
    });
    await writeFile(join(svc.workflowsDir, 'waiting.yaml'), WAITING);
    let started!: () => void;
    const first = new Promise<void>((resolve) => (started = resolve));
    const off = svc.runtime.subscribe((event) => {
      if (event.type === 'step_start' && event.run_id === 'a-first') started();
    });
    await queue(svc, 'a-first');
    await first;
    off();
    await queue(svc, 'a-second');
    const running = await explain(svc.url, 'a-first');
    expect(running).to.include({ status: 'running', reason: 'running', source: 'engine' });
    expect(running.steps.map((s) => [s.step, s.status])).to.deep.equal([['wait', 'running']]);
    expect((await explain(svc.url, 'a-second')).queue).to.deep.equal({ position: 1, waiting: 1 });
  });
});
