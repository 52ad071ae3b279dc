/**
 * Observability of a deployment of real processes (1 api instance, 2 workers, one real
 * redis-server, a local OTLP receiver): each worker serves its own metrics and health probes
 * on its own port under the API key, counts exactly the runs it executed (the api instance
 * counts none of them), and the run spans a worker exports continue the trace of the
 * `POST /api/run` request the api instance exported.
 */
import { expect } from 'chai';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot, packageVersion } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { ATTR } from '../../src/tracing/index.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { parseSamples, sampleValue } from '../http/metrics-scrape.js';
import { startHttpReceiver, type OtlpReceiver, type ReceivedSpan } from '../http/otlp-receiver.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { spawnService, startCluster, type Cluster, type ClusterProcess } from './cluster.js';

const KEY = 'worker-obs-key';
const AUTH = { authorization: `Bearer ${KEY}` };

const QUICK = `name: quick
steps:
  - { name: only, agent: tier0_echo, inputs: { text: hi } }
`;
const FLAKY = `name: flaky
steps:
  - { name: boom, agent: tier0_fail, max_attempts: 2, inputs: { message: no luck } }
`;
const TOOLED = `name: tooled
steps:
  - name: remember
    agent: tier0_tool
    tools: [memory_set]
    inputs: { tool: memory_set, args: { key: note, value: hello } }
  - { name: summarize, agent: tier1_summarizer, depends_on: [remember], inputs: { text: hello } }
`;
const SLEEPY = `name: sleepy
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 60000 } }
`;

/** The caller's trace, which the request span continues and the worker's run span joins. */
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

/** Waits for what only the file system or a log shows: checked every 25 ms, failing after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function request(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

async function scrape(target: ClusterProcess): Promise<string> {
  const res = await request(`${target.url}/metrics`, 'GET', AUTH);
  expect(res.status, res.text).to.equal(200);
  return res.text;
}

/** Run ids a process's log says it started (`run starting`, debug level). */
function startedOn(target: ClusterProcess): string[] {
  return target
    .logs()
    .filter((line) => line.msg === 'run starting')
    .map((line) => String(line.runId));
}

describe('worker observability: 1 api instance, 2 workers, one Redis (real processes)', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let receiver: OtlpReceiver;
  let llm: FakeServer;
  let root: string;
  let runsDir: string;
  let cluster: Cluster;
  let api: ClusterProcess;

  before(async () => {
    redis = await startTestRedis();
    receiver = await startHttpReceiver();
    // The tier-1 model: an OpenAI-compatible server on 127.0.0.1 (the workers' model calls).
    llm = await startFakeServer((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [{ id: 'gpt-x' }] });
      const usage = { prompt: 7, completion: 3 };
      if ((req.body as { stream?: boolean }).stream === true) {
        return sendSse(res, openAiChunks('summary', { model: 'gpt-x', usage }));
      }
      return sendJson(res, 200, openAiAnswer('summary', { model: 'gpt-x', usage }));
    });
    root = await mkdtemp(join(tmpdir(), 'agentic-worker-obs-'));
    runsDir = join(root, 'runs');
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    for (const [name, text] of Object.entries({
      quick: QUICK,
      flaky: FLAKY,
      tooled: TOOLED,
      sleepy: SLEEPY,
    })) {
      await writeFile(join(root, 'workflows', `${name}.yaml`), text);
    }
    cluster = await startCluster({
      redisUrl: redis.url,
      runsDir,
      workflowsDir: join(root, 'workflows'),
      apis: 1,
      workers: 2,
      env: {
        LOG_LEVEL: 'debug',
        AGENTIC_API_KEY: KEY,
        AGENTIC_METRICS: '1',
        AGENTIC_TRACING: '1',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${llm.url}/v1`,
        OPENAI_API_KEY: 'sk-worker-obs-0123456789',
        OLLAMA_HOST: llm.url,
        AGENTIC_MODEL_TIER_1: 'openai:gpt-x',
      },
    });
    [api] = cluster.apis as [ClusterProcess];
  });
  after(async () => {
    await cluster?.stop();
    await receiver?.close();
    await llm?.close();
    await redis?.stop();
    await rm(root, { recursive: true, force: true });
  });

  async function post(workflow: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await request(`${api.url}/api/run`, 'POST', { ...AUTH, ...headers }, { workflow });
    expect(res.status, res.text).to.equal(200);
    return (JSON.parse(res.text) as { run_id: string }).run_id;
  }

  async function ended(runId: string): Promise<RunRecord> {
    let record: RunRecord | undefined;
    await until(`the end of ${runId}`, async () => {
      const name = (await readdir(runsDir)).find((n) => n.endsWith(`_${runId}.json`));
      if (name === undefined) return false;
      record = JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
      return record.status !== 'running';
    });
    return record!;
  }

  it("serves each worker's metrics and health probes on its own port, under the API key", async () => {
    const urls = cluster.workers.map((worker) => worker.url);
    expect(
      urls.every((url) => /^http:\/\/127\.0\.0\.1:\d+$/.test(url)),
      urls.join(),
    ).to.equal(true);
    expect(new Set([...urls, api.url]).size).to.equal(3);
    for (const worker of cluster.workers) {
      expect((await request(`${worker.url}/metrics`, 'GET')).status).to.equal(401);
      const live = await request(`${worker.url}/api/health`, 'GET');
      expect(live.status).to.equal(200);
      expect(JSON.parse(live.text)).to.deep.equal({ status: 'ok', version: packageVersion });
      expect((await request(`${worker.url}/api/health/ready`, 'GET')).status).to.equal(401);
      const ready = await request(`${worker.url}/api/health/ready`, 'GET', AUTH);
      expect(ready.status, ready.text).to.equal(200);
      const body = JSON.parse(ready.text) as { status: string; checks: Record<string, unknown> };
      expect(body.status).to.equal('ready');
      expect(Object.keys(body.checks).sort()).to.deep.equal([
        'active_runs',
        'queue',
        'redis',
        'run_writes',
        'runs_dir',
        'runs_dir_space',
        'runs_dir_write',
        'workflows_dir',
      ]);
      expect(body.checks.redis).to.deep.equal({ ok: true });
      expect(body.checks.queue).to.deep.equal({ ok: true });
      const missing = await request(`${worker.url}/api/runs`, 'GET', AUTH);
      expect(missing.status).to.equal(404);
      expect(JSON.parse(missing.text)).to.have.property('detail');
      const text = await scrape(worker);
      expect(
        parseSamples(text).some((s) => s.name === 'agentic_process_cpu_seconds_total'),
      ).to.equal(true);
    }
  });

  it('counts each run dispatched through the api instance once, on the worker that ran it', async () => {
    const plan = [
      ...Array.from({ length: 6 }, () => 'quick'),
      ...Array.from({ length: 3 }, () => 'flaky'),
      ...Array.from({ length: 2 }, () => 'tooled'),
    ];
    const runIds = await Promise.all(plan.map((workflow) => post(workflow)));
    const records = await Promise.all(runIds.map((runId) => ended(runId)));
    const workflowOf = new Map(runIds.map((runId, i) => [runId, plan[i]!]));
    const adapter = records[0]!.adapter;
    expect(records.map((r) => r.status).sort()).to.deep.equal([
      ...Array.from({ length: 3 }, () => 'failed'),
      ...Array.from({ length: 8 }, () => 'success'),
    ]);

    let total = 0;
    for (const worker of cluster.workers) {
      const mine = startedOn(worker).filter((runId) => workflowOf.has(runId));
      total += mine.length;
      const count = (workflow: string): number =>
        mine.filter((runId) => workflowOf.get(runId) === workflow).length;
      const text = await scrape(worker);
      for (const [workflow, status] of [
        ['quick', 'success'],
        ['flaky', 'failed'],
        ['tooled', 'success'],
      ] as const) {
        const labels = { workflow, adapter };
        const n = count(workflow);
        expect(sampleValue(text, 'agentic_runs_started_total', labels), workflow).to.equal(n);
        expect(
          sampleValue(text, 'agentic_runs_finished_total', { ...labels, status }),
          workflow,
        ).to.equal(n);
        expect(
          sampleValue(text, 'agentic_run_duration_seconds_count', { ...labels, status }),
          workflow,
        ).to.equal(n);
      }
      const steps = (agent: string, status: string): number =>
        sampleValue(text, 'agentic_step_duration_seconds_count', { agent, status });
      expect(steps('tier0_echo', 'success')).to.equal(count('quick'));
      expect(steps('tier0_fail', 'failed')).to.equal(count('flaky'));
      expect(steps('tier0_tool', 'success')).to.equal(count('tooled'));
      expect(sampleValue(text, 'agentic_step_retries_total', { agent: 'tier0_fail' })).to.equal(
        count('flaky'),
      );
      expect(
        sampleValue(text, 'agentic_tool_calls_total', { tool: 'memory_set', outcome: 'success' }),
      ).to.equal(count('tooled'));
      const model = { provider: 'openai', model: 'openai:gpt-x' };
      expect(
        sampleValue(text, 'agentic_llm_calls_total', { ...model, outcome: 'success' }),
      ).to.equal(count('tooled'));
      expect(
        sampleValue(text, 'agentic_llm_call_duration_seconds_count', {
          ...model,
          outcome: 'success',
        }),
      ).to.equal(count('tooled'));
      expect(
        sampleValue(text, 'agentic_llm_tokens_total', { ...model, direction: 'input' }),
      ).to.equal(7 * count('tooled'));
      expect(
        sampleValue(text, 'agentic_llm_tokens_total', { ...model, direction: 'output' }),
      ).to.equal(3 * count('tooled'));
      expect(sampleValue(text, 'agentic_active_runs')).to.equal(0);
    }
    expect(total).to.equal(plan.length);

    // The api instance accepted them (its requests) and executed none.
    const text = await scrape(api);
    const names = new Set(parseSamples(text).map((s) => s.name));
    for (const name of [
      'agentic_runs_started_total',
      'agentic_runs_finished_total',
      'agentic_run_duration_seconds_count',
      'agentic_step_duration_seconds_count',
      'agentic_step_retries_total',
      'agentic_tool_calls_total',
      'agentic_llm_calls_total',
      'agentic_llm_tokens_total',
    ]) {
      expect(names.has(name), name).to.equal(false);
    }
    const accepted = { method: 'POST', route: '/api/run', status: '200' };
    expect(sampleValue(text, 'agentic_http_request_duration_seconds_count', accepted)).to.equal(
      plan.length,
    );
  });

  it('reports a run executing on a worker as active there, not on the api instance', async () => {
    const runId = await post('sleepy');
    let runner: ClusterProcess | undefined;
    await until(`a worker starting ${runId}`, () => {
      runner = cluster.workers.find((worker) => startedOn(worker).includes(runId));
      return Promise.resolve(runner !== undefined);
    });
    for (const worker of cluster.workers) {
      const active = sampleValue(await scrape(worker), 'agentic_active_runs');
      expect(active, worker.url).to.equal(worker === runner ? 1 : 0);
    }
    expect(sampleValue(await scrape(api), 'agentic_active_runs')).to.equal(0);
    const cancel = await request(`${api.url}/api/runs/${runId}/cancel`, 'POST', AUTH, {});
    expect(cancel.status, cancel.text).to.equal(200);
    expect(await ended(runId)).to.include({ status: 'failed', error: 'cancelled' });
  });

  it('exits 1 naming AGENTIC_WORKER_PORT when the port is in use, leaving nothing running', async () => {
    const taken = new URL(api.url).port;
    const error = await spawnService('worker', {
      REDIS_URL: redis.url,
      AGENTIC_RUNS_DIR: runsDir,
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_METRICS: '1',
      AGENTIC_WORKER_PORT: taken,
      LOG_FORMAT: 'json',
    }).then(
      () => undefined,
      (reason: unknown) => String(reason),
    );
    expect(error).to.match(/worker exited with 1 before it was ready/);
    expect(error).to.include(
      `cannot listen on 127.0.0.1:${taken}: the port is in use; pick another with AGENTIC_WORKER_PORT`,
    );
  });

  it("continues the api request's trace on the worker: request → run → steps in one tree", async () => {
    const runId = await post('tooled', { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    expect((await ended(runId)).status).to.equal('success');
    const runner = cluster.workers.find((worker) => startedOn(worker).includes(runId));
    expect(runner, 'the worker that ran it').not.to.equal(undefined);
    // A graceful stop flushes each process's batch of spans to the receiver before it exits.
    const processes = [api, ...cluster.workers];
    for (const proc of processes) proc.child.kill('SIGTERM');
    expect(await Promise.all(processes.map((p) => p.exit))).to.deep.equal([0, 0, 0]);

    const spans = receiver.spans.filter((span) => span.traceId === TRACE_ID);
    const one = (name: string): ReceivedSpan => {
      const found = spans.filter((span) => span.name === name);
      expect(
        found.map((span) => span.name),
        `one span named ${name}`,
      ).to.deep.equal([name]);
      return found[0]!;
    };
    const requestSpan = one('POST /api/run');
    expect(requestSpan).to.deep.include({ parentSpanId: CALLER_SPAN, kind: 2 });
    const run = one('run tooled');
    expect(run.parentSpanId).to.equal(requestSpan.spanId);
    expect(run.attributes).to.deep.include({ [ATTR.RUN_ID]: runId, [ATTR.STATUS]: 'success' });
    const remember = one('step remember');
    const summarize = one('step summarize');
    expect([remember.parentSpanId, summarize.parentSpanId]).to.deep.equal([run.spanId, run.spanId]);
    expect(one('execute_tool memory_set').parentSpanId).to.equal(remember.spanId);
    const chats = spans.filter((span) => span.name.startsWith('chat '));
    expect(chats.map((span) => [span.parentSpanId, span.kind])).to.deep.equal([
      [summarize.spanId, 3],
    ]);
    // Every span of the trace hangs from the caller's span: one tree across both processes.
    const ids = new Set([CALLER_SPAN, ...spans.map((span) => span.spanId)]);
    expect(spans.filter((span) => !ids.has(span.parentSpanId))).to.deep.equal([]);
    // The api instance's log says it queued the run; the worker's, that it ran it.
    expect(startedOn(api)).to.deep.equal([]);
  });
});
