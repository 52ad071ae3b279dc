import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sanitize } from '../../src/security/index.js';
import { connectWs, UpgradeRefused } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';
import { parseSamples, sampleValue } from './metrics-scrape.js';

const FLAKY = `name: flaky
description: Fails twice, so one retry and a failed run.
steps:
  - name: boom
    agent: tier0_fail
    description: Always fails.
    max_attempts: 2
    inputs:
      message: no luck
`;

const SLOW = `name: slow
description: Sleeps until cancelled.
steps:
  - name: wait
    agent: tier0_sleep
    description: Sleep a minute.
    inputs:
      ms: 60000
`;

const KEY = 'metrics-test-key';

describe('GET /metrics', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  async function start(env: Record<string, string>): Promise<TestService> {
    svc = await startTestService({ env });
    await writeFile(join(svc.workflowsDir, 'flaky.yaml'), FLAKY);
    await writeFile(join(svc.workflowsDir, 'slow.yaml'), SLOW);
    return svc;
  }

  async function run(s: TestService, workflow: string, body: Record<string, unknown> = {}) {
    const res = await call(s.url, 'POST', '/api/run', { workflow, ...body });
    expect(res.status, res.text).to.equal(200);
    return s.finished((res.body as { run_id: string }).run_id);
  }

  it('is not served (404) when AGENTIC_METRICS is off', async () => {
    const s = await start({});
    expect((await call(s.url, 'GET', '/metrics')).status).to.equal(404);
    expect(s.metrics).to.equal(undefined);
  });

  it('counts a known sequence of runs, steps, retries and requests exactly', async () => {
    const s = await start({ AGENTIC_METRICS: '1' });
    const adapter = s.runtime.options.defaultAdapter;
    await run(s, 'test_deterministic');
    await run(s, 'test_deterministic', { input_data: { text: 'abc' } });
    const failed = await run(s, 'flaky');
    expect(failed.status).to.equal('failed');
    expect((await call(s.url, 'GET', '/api/runs/nope.json')).status).to.equal(404);

    const res = await call(s.url, 'GET', '/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const text = res.text;
    const ok = { workflow: 'test_deterministic', adapter };
    const bad = { workflow: 'flaky', adapter };
    expect(sampleValue(text, 'agentic_runs_started_total', ok)).to.equal(2);
    expect(sampleValue(text, 'agentic_runs_started_total', bad)).to.equal(1);
    expect(sampleValue(text, 'agentic_runs_finished_total', { ...ok, status: 'success' })).to.equal(
      2,
    );
    expect(sampleValue(text, 'agentic_runs_finished_total', { ...ok, status: 'failed' })).to.equal(
      0,
    );
    expect(sampleValue(text, 'agentic_runs_finished_total', { ...bad, status: 'failed' })).to.equal(
      1,
    );
    expect(
      sampleValue(text, 'agentic_run_duration_seconds_count', { ...ok, status: 'success' }),
    ).to.equal(2);
    expect(
      sampleValue(text, 'agentic_run_duration_seconds_count', { ...bad, status: 'failed' }),
    ).to.equal(1);
    for (const agent of ['tier0_process', 'tier0_counter', 'tier0_echo']) {
      const labels = { agent, status: 'success' };
      expect(sampleValue(text, 'agentic_step_duration_seconds_count', labels), agent).to.equal(2);
    }
    expect(
      sampleValue(text, 'agentic_step_duration_seconds_count', {
        agent: 'tier0_fail',
        status: 'failed',
      }),
    ).to.equal(1);
    expect(sampleValue(text, 'agentic_step_retries_total', { agent: 'tier0_fail' })).to.equal(1);
    expect(sampleValue(text, 'agentic_active_runs')).to.equal(0);
    const post = { method: 'POST', route: '/api/run', status: '200' };
    expect(sampleValue(text, 'agentic_http_request_duration_seconds_count', post)).to.equal(3);
    const missing = { method: 'GET', route: '/api/runs/:filename', status: '404' };
    expect(sampleValue(text, 'agentic_http_request_duration_seconds_count', missing)).to.equal(1);
    // The process defaults, under the same prefix.
    for (const name of [
      'agentic_nodejs_eventloop_lag_seconds',
      'agentic_nodejs_heap_size_used_bytes',
      'agentic_process_cpu_seconds_total',
    ]) {
      expect(
        parseSamples(text).some((sample) => sample.name === name),
        name,
      ).to.equal(true);
    }
    expect(text).to.include('# TYPE agentic_nodejs_gc_duration_seconds histogram');
  });

  it('keeps labels bounded over 10,000 distinct run ids and paths', async function () {
    this.timeout(120_000);
    const s = await start({ AGENTIC_METRICS: '1' });
    const before = parseSamples((await call(s.url, 'GET', '/metrics')).text).length;
    const paths: string[] = [];
    for (let i = 0; i < 5000; i += 1) {
      paths.push(`/api/runs/run-${i}-${Math.random().toString(36).slice(2)}`);
      paths.push(`/no/such/path-${i}`);
    }
    for (let i = 0; i < paths.length; i += 100) {
      await Promise.all(
        paths.slice(i, i + 100).map(async (path) => {
          const res = await fetch(s.url + path);
          await res.arrayBuffer();
        }),
      );
    }
    const text = (await call(s.url, 'GET', '/metrics')).text;
    expect(text).to.not.match(/run-\d+-|path-\d+/);
    const routes = new Set(
      parseSamples(text)
        .filter((sample) => sample.name === 'agentic_http_request_duration_seconds_count')
        .map((sample) => `${sample.labels.method} ${sample.labels.route} ${sample.labels.status}`),
    );
    expect([...routes].sort()).to.deep.equal([
      'GET /api/runs/:filename 404',
      'GET /metrics 200',
      'GET unmatched 404',
    ]);
    const missing = { method: 'GET', route: '/api/runs/:filename', status: '404' };
    expect(sampleValue(text, 'agentic_http_request_duration_seconds_count', missing)).to.equal(
      5000,
    );
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    expect(sampleValue(text, 'agentic_http_request_duration_seconds_count', unmatched)).to.equal(
      5000,
    );
    // Three route series of 14 samples each plus the GC histogram filling in: tens, not 10,000.
    expect(parseSamples(text).length - before).to.be.below(100);
  });

  it('needs the API key when one is set, counts the refusal, and is public with AGENTIC_METRICS_PUBLIC', async () => {
    const s = await start({ AGENTIC_METRICS: '1', AGENTIC_API_KEY: KEY });
    expect((await call(s.url, 'GET', '/metrics')).status).to.equal(401);
    expect((await call(s.url, 'GET', '/METRICS')).status).to.equal(401);
    const res = await call(s.url, 'GET', '/metrics', undefined, { 'x-api-key': KEY });
    expect(res.status).to.equal(200);
    expect(sampleValue(res.text, 'agentic_refusals_total', { reason: 'auth' })).to.equal(2);
    expect(
      sampleValue(res.text, 'agentic_http_request_duration_seconds_count', {
        method: 'GET',
        route: 'unmatched',
        status: '401',
      }),
    ).to.equal(2);
    await s.dispose();
    svc = undefined;

    const open = await start({
      AGENTIC_METRICS: '1',
      AGENTIC_API_KEY: KEY,
      AGENTIC_METRICS_PUBLIC: '1',
    });
    expect((await call(open.url, 'GET', '/metrics')).status).to.equal(200);
    expect((await call(open.url, 'GET', '/api/runs')).status).to.equal(401);
  });

  it('counts rate-limit refusals', async () => {
    const s = await start({ AGENTIC_METRICS: '1', AGENTIC_RATE_LIMIT_DEFAULT: '2/minute' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push((await call(s.url, 'GET', '/api/workflows')).status);
    expect(statuses).to.deep.equal([200, 200, 429, 429]);
    // The scrape itself is rate limited too; count what the service saw so far via its registry.
    const text = await s.metrics?.registry.metrics();
    expect(sampleValue(text ?? '', 'agentic_refusals_total', { reason: 'rate_limit' })).to.equal(2);
  });

  it('counts sanitizer findings by category and classification', async () => {
    const s = await start({ AGENTIC_METRICS: '1' });
    const body = {
      workflow: 'test_deterministic',
      input_data: { text: 'key AKIAIOSFODNN7EXAMPLE and mail jane@example.com' },
    };
    const expected = sanitize(body, { raw: JSON.stringify(body) });
    expect(expected.findings).to.not.be.empty;
    const res = await call(s.url, 'POST', '/api/run', body);
    expect(res.status, res.text).to.equal(200);
    await s.finished((res.body as { run_id: string }).run_id);
    const text = (await call(s.url, 'GET', '/metrics')).text;
    const want = new Map<string, number>();
    for (const finding of expected.findings) {
      const key = `${finding.category} ${expected.classification}`;
      want.set(key, (want.get(key) ?? 0) + 1);
    }
    const got = new Map(
      parseSamples(text)
        .filter((sample) => sample.name === 'agentic_sanitizer_findings_total')
        .map((sample) => [
          `${sample.labels.category} ${sample.labels.classification}`,
          sample.value,
        ]),
    );
    expect(got).to.deep.equal(want);
  });

  it('counts lockout refusals apart from bad keys', async () => {
    const s = await start({
      AGENTIC_METRICS: '1',
      AGENTIC_API_KEY: KEY,
      AGENTIC_AUTH_LOCKOUT_THRESHOLD: '2',
    });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      statuses.push(
        (await call(s.url, 'GET', '/api/runs', undefined, { 'x-api-key': 'no' })).status,
      );
    }
    expect(statuses).to.deep.equal([401, 401, 429]);
    const text = await s.metrics?.registry.metrics();
    expect(sampleValue(text ?? '', 'agentic_refusals_total', { reason: 'auth' })).to.equal(2);
    expect(sampleValue(text ?? '', 'agentic_refusals_total', { reason: 'lockout' })).to.equal(1);
    expect(sampleValue(text ?? '', 'agentic_refusals_total', { reason: 'rate_limit' })).to.equal(0);
  });

  it('counts WebSocket upgrades refused for their key and for the rate limit', async () => {
    const s = await start({
      AGENTIC_METRICS: '1',
      AGENTIC_API_KEY: KEY,
      AGENTIC_RATE_LIMIT_DEFAULT: '1/minute',
    });
    const ws = connectWs(`${s.url.replace('http', 'ws')}/ws/execution/some-run`);
    await ws.opened;
    expect((await ws.closed).code).to.equal(1008);
    const limited = connectWs(`${s.url.replace('http', 'ws')}/ws/execution/some-run`, {
      'x-api-key': KEY,
    });
    const refused = await limited.opened.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).to.be.instanceOf(UpgradeRefused);
    expect((refused as UpgradeRefused).status).to.equal(429);
    const text = await s.metrics?.registry.metrics();
    expect(sampleValue(text ?? '', 'agentic_refusals_total', { reason: 'auth' })).to.equal(1);
    expect(sampleValue(text ?? '', 'agentic_refusals_total', { reason: 'rate_limit' })).to.equal(1);
  });

  it('counts replay evictions and connected SSE clients', async () => {
    const s = await start({ AGENTIC_METRICS: '1', AGENTIC_FINISHED_BUFFERS: '1' });
    await run(s, 'test_deterministic');
    await run(s, 'test_deterministic');
    await run(s, 'test_deterministic');
    let text = (await call(s.url, 'GET', '/metrics')).text;
    expect(sampleValue(text, 'agentic_replay_evictions_total')).to.equal(2);

    const started = await call(s.url, 'POST', '/api/run', { workflow: 'slow' });
    const runId = (started.body as { run_id: string }).run_id;
    const abort = new AbortController();
    const stream = await fetch(`${s.url}/api/runs/${runId}/stream`, { signal: abort.signal });
    const reader = stream.body?.getReader();
    await reader?.read();
    text = (await call(s.url, 'GET', '/metrics')).text;
    expect(sampleValue(text, 'agentic_stream_clients', { transport: 'sse' })).to.equal(1);
    expect(sampleValue(text, 'agentic_stream_clients', { transport: 'ws' })).to.equal(0);
    expect(sampleValue(text, 'agentic_active_runs')).to.equal(1);
    await reader?.cancel().catch(() => undefined);
    abort.abort();
    await call(s.url, 'POST', `/api/runs/${runId}/cancel`);
    await s.finished(runId);
    text = (await call(s.url, 'GET', '/metrics')).text;
    expect(sampleValue(text, 'agentic_active_runs')).to.equal(0);
  });

  it('counts evaluations by rubric, grade and outcome', async () => {
    const s = await start({ AGENTIC_METRICS: '1' });
    const started = await call(s.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      evaluation: { enabled: true, dataset_source: 'none' },
    });
    expect(started.status, started.text).to.equal(200);
    const runId = (started.body as { run_id: string }).run_id;
    // The stream of an evaluated run ends after its evaluation_complete.
    const frames = await (await fetch(`${s.url}/api/runs/${runId}/stream`)).text();
    const complete = frames
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
      .find((event) => event.type === 'evaluation_complete');
    expect(complete).to.be.an('object');
    const text = (await call(s.url, 'GET', '/metrics')).text;
    const outcome = complete?.passed === true ? 'passed' : 'failed';
    const labels = { rubric: String(complete?.rubric_id), grade: String(complete?.grade), outcome };
    expect(sampleValue(text, 'agentic_evaluations_total', labels)).to.equal(1);
  });
});
