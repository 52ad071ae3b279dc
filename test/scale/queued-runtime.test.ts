/**
 * The queued runtime and its worker in one process (role `all` with Redis), against a real
 * redis-server: what an api instance answers before any worker runs anything, and the final
 * record of a run executed through the queue.
 */
import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/index.js';
import { AppError } from '../../src/errors.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { createSilentLogger } from '../../src/log.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { startDispatch, type Dispatch } from '../../src/scale/dispatch.js';
import { createScaleKeys } from '../../src/scale/keys.js';
import { createRunClaims } from '../../src/scale/run-claims.js';
import { RUN_QUEUE, type RunJob } from '../../src/scale/run-queue.js';
import type { RunJobResult } from '../../src/scale/run-worker.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { rejection } from '../support/rejection.js';

const ECHO = `name: echo_in
inputs:
  count: { type: integer }
steps:
  - { name: only, agent: tier0_echo, inputs: { text: hi } }
`;
const SHORT = `name: short
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 300 } }
`;
const WAITING = `name: waiting
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 60000 } }
`;

/** The error a promise rejects with (fails when it resolves). */
describe('queued runtime (role all with REDIS_URL, one process)', function () {
  this.timeout(20_000);
  let redis: TestRedis;
  let root: string;
  let dispatch: Dispatch;
  let client: Redis;

  before(async () => {
    redis = await startTestRedis();
    client = new Redis(redis.url);
    // The outage test stops Redis: this client reconnects quietly.
    client.on('error', () => undefined);
  });
  after(async () => {
    client.disconnect();
    await redis.stop();
  });
  beforeEach(async () => {
    await client.flushall();
    root = await mkdtemp(join(tmpdir(), 'agentic-queued-'));
    await writeFile(join(root, 'echo_in.yaml'), ECHO);
    await writeFile(join(root, 'waiting.yaml'), WAITING);
    await writeFile(join(root, 'short.yaml'), SHORT);
    const config = loadConfig({
      REDIS_URL: redis.url,
      AGENTIC_RUNS_DIR: join(root, 'runs'),
      AGENTIC_WORKFLOWS_DIR: root,
      AGENTIC_NO_LLM: '1',
    });
    const logger = createSilentLogger();
    dispatch = startDispatch({
      config,
      logger,
      runtime: {
        workflowsDir: config.workflowsDir,
        runsDir: config.runsDir,
        noLlm: true,
        logger,
      },
    });
  });
  afterEach(async () => {
    await dispatch.close(0);
    await rm(root, { recursive: true, force: true });
  });

  it("resolves a queued run's done with the worker's final record", async () => {
    const runs = dispatch.runs!;
    const started = await runs.start({ workflow: 'echo_in', input: { count: '3' }, runId: 'q-1' });
    expect(started.runId).to.equal('q-1');
    const record = await started.done;
    expect(record).to.include({ run_id: 'q-1', status: 'success', workflow_name: 'echo_in' });
    expect(record.inputs).to.deep.equal({ count: 3 });
    const files = (await readdir(join(root, 'runs'))).filter((n) => n.endsWith('.json'));
    expect(files).to.deep.equal([files.find((n) => n.endsWith('_q-1.json'))]);
    expect(runs.isActive('q-1')).to.equal(false);
  });

  it('refuses bad runs before claiming or queueing anything', async () => {
    const runs = dispatch.runs!;
    const unknown = await rejection(runs.start({ workflow: 'missing' }), AppError);
    expect(unknown.status).to.equal(404);
    const badInput = await rejection(
      runs.start({ workflow: 'echo_in', input: { count: 'x' } }),
      AppError,
    );
    expect(badInput.status).to.equal(422);
    const inline = await rejection(runs.start({ workflow: 'name: x\nsteps: []\n' }), AppError);
    expect(inline).to.include({ status: 422 });
    expect(inline.message).to.equal(
      'runs queued to workers name a workflow of the workflows directory',
    );
    const adapter = await rejection(
      runs.start({ workflow: 'echo_in', adapter: 'other' as 'graph' }),
      AppError,
    );
    expect(adapter.status).to.equal(422);
    expect(await client.keys('*claim*')).to.deep.equal([]);
    expect(await client.keys('*queue:q*')).to.deep.equal([]);
  });

  it('knows a run active while a worker runs it, and cancels it through the worker', async () => {
    const runs = dispatch.runs!;
    const started = await runs.start({ workflow: 'waiting', runId: 'q-wait' });
    expect(runs.isActive('q-wait')).to.equal(true);
    expect(runs.activeRuns()).to.deep.equal(['q-wait']);
    const conflict = await rejection(
      runs.start({ workflow: 'waiting', runId: 'q-wait' }),
      AppError,
    );
    expect(conflict.status).to.equal(409);
    expect(await runs.cancel('q-wait')).to.equal(true);
    const record = await started.done;
    expect(record).to.include({ status: 'failed', error: 'cancelled' });
    expect(runs.isActive('q-wait')).to.equal(false);
    expect(await runs.cancel('q-wait')).to.equal(false);
  });

  it('ends a run its worker cannot start: a failed run file saying why, its events, the claim released', async () => {
    const runs = dispatch.runs!;
    const events: WorkflowEvent[] = [];
    const ended = new Promise<void>((resolve) => {
      dispatch.executor.subscribe((event) => {
        events.push(event);
        if (event.type === 'workflow_end') resolve();
      });
    });
    // Accepted and queued as an api instance does, for a workflow gone when the worker takes it.
    const claims = createRunClaims(client, createScaleKeys('agentic'));
    expect(await claims.claim('q-gone')).to.equal(true);
    const queue = new Queue<RunJob>(RUN_QUEUE, { connection: client, prefix: 'agentic' });
    const queueEvents = new QueueEvents(RUN_QUEUE, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'agentic',
    });
    let result: RunJobResult;
    try {
      await queueEvents.waitUntilReady();
      const request = { workflow: 'gone', runId: 'q-gone', input: { n: 1 } };
      const job = await queue.add('q-gone', { runId: 'q-gone', request }, { jobId: 'q-gone' });
      // The job completes once the claim is released (after the file and the events).
      result = (await job.waitUntilFinished(queueEvents)) as RunJobResult;
      await ended;
    } finally {
      await queueEvents.close();
      await queue.close();
    }
    expect(events.map((event) => [event.type, event.run_id])).to.deep.equal([
      ['workflow_start', 'q-gone'],
      ['workflow_end', 'q-gone'],
    ]);
    expect(events[1]).to.include({ status: 'failed' });
    const files = (await readdir(join(root, 'runs'))).filter((n) => n.endsWith('.json'));
    expect(files).to.have.length(1);
    expect(files[0]).to.match(/^\d{8}T\d{9}Z_gone_q-gone\.json$/);
    const record = JSON.parse(await readFile(join(root, 'runs', files[0]!), 'utf8')) as RunRecord;
    expect(record).to.include({ run_id: 'q-gone', status: 'failed', workflow_name: 'gone' });
    expect(record.error).to.match(/^could not start: .*gone/);
    expect(record.inputs).to.deep.equal({ n: 1 });
    expect(result).to.deep.equal({ filename: files[0], status: 'failed' });
    // The claim went after the file was written: the id is free again.
    expect(await claims.get('q-gone')).to.equal(undefined);
    expect(await runs.cancel('q-gone')).to.equal(false);
  });

  it("queues the request's trace context as W3C strings, and nothing without one", async () => {
    const runs = dispatch.runs!;
    const traceContext = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
    });
    await runs.start({ workflow: 'waiting', runId: 'q-traced', traceContext });
    await runs.start({ workflow: 'waiting', runId: 'q-plain' });
    const queue = new Queue<RunJob>(RUN_QUEUE, { connection: client, prefix: 'agentic' });
    try {
      const traced = (await queue.getJob('q-traced'))!.data;
      expect(traced.trace).to.deep.equal({
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      });
      expect(traced.request).not.to.have.property('traceContext');
      const plain = (await queue.getJob('q-plain'))!.data;
      expect(plain).to.deep.equal({
        runId: 'q-plain',
        request: { workflow: 'waiting', runId: 'q-plain', adapter: plain.request.adapter },
      });
    } finally {
      await queue.close();
    }
    expect(await runs.cancel('q-traced')).to.equal(true);
    expect(await runs.cancel('q-plain')).to.equal(true);
  });

  it('knows at once that a run it executed ended while Redis is away', async () => {
    const runs = dispatch.runs!;
    const begun = new Promise<void>((resolve) => {
      dispatch.executor.subscribe((event) => {
        if (event.type === 'workflow_start') resolve();
      });
    });
    const started = await runs.start({ workflow: 'short', runId: 'q-outage' });
    await begun;
    await redis.stop();
    try {
      // The claim's release notice cannot come back through Redis: the end is known locally.
      const record = await started.done;
      expect(record).to.include({ run_id: 'q-outage', status: 'success' });
      expect(runs.isActive('q-outage')).to.equal(false);
      expect(runs.activeRuns()).to.deep.equal([]);
    } finally {
      await redis.restart();
    }
  });
});
