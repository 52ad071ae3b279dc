/**
 * Scale-out benchmark (`npm run bench:scale`, on the compiled `dist/` that `npm start` ships):
 *  1. completed runs/s and POST → run-file latency for one process (`AGENTIC_ROLE=all`, no
 *     Redis) against one api instance + two workers sharing a real redis-server, with the same
 *     load: BENCH_SCALE_RUNS (2000) runs of `test_deterministic` in no-LLM mode,
 *     BENCH_SCALE_CONCURRENCY (20) in flight (a client starts the next run when one's file is
 *     final);
 *  2. Redis memory per active and per ended run (streams not yet expired);
 *  3. the cross-instance event latency (a run's event on one instance → a WebSocket client on
 *     another, through the Redis stream): {@link measureCrossInstanceLatency}, target p99 ≤ 20 ms.
 * A run counts as done when its run file holds a final status (seen through fs.watch on the
 * shared runs directory, then read), so the figure includes the write through the worker.
 * Processes, Redis and this client share the machine's cores: read the figures side by side.
 */
import { watch } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../../src/config/index.js';
import { startTestRedis } from '../redis/redis-server.js';
import { spawnService, startCluster, type ClusterProcess } from '../scale/cluster.js';
import { measureCrossInstanceLatency } from './scale-events.bench.js';

const env = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const RUNS = env('BENCH_SCALE_RUNS', 2000);
const CONCURRENCY = env('BENCH_SCALE_CONCURRENCY', 20);
/** Runs watched at once for the cross-process latency under load (it is also taken alone). */
const LATENCY_CONCURRENCY = env('BENCH_SCALE_LATENCY_CONCURRENCY', 10);
const FINAL = new Set(['success', 'failed', 'cancelled']);

interface LoadReport {
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Runs the load against `api` and waits for every run file in `runsDir` to be final. */
async function load(api: ClusterProcess, runsDir: string, label: string): Promise<LoadReport> {
  const waiting = new Map<string, (status: string) => void>();
  const reading = new Set<string>();
  // A write that lands while the previous version is being read is read again afterwards.
  const again = new Set<string>();
  const check = (runId: string, filename: string): void => {
    if (reading.has(runId)) {
      again.add(runId);
      return;
    }
    reading.add(runId);
    readFile(join(runsDir, filename), 'utf8')
      .then((text) => {
        const status = (JSON.parse(text) as { status?: string }).status ?? '';
        if (FINAL.has(status)) waiting.get(runId)?.(status);
      })
      .catch(() => again.add(runId)) // a file replaced while read: read it again
      .finally(() => {
        reading.delete(runId);
        if (again.delete(runId) && waiting.has(runId)) check(runId, filename);
      });
  };
  const watcher = watch(runsDir, (_event, filename) => {
    const match = filename === null ? null : /_(bench-[a-z0-9-]+)\.json$/.exec(filename);
    const runId = match?.[1];
    if (runId !== undefined && filename !== null && waiting.has(runId)) check(runId, filename);
  });
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const one = async (index: number): Promise<void> => {
    const runId = `bench-${label}-${index}`;
    const done = new Promise<string>((resolve) => waiting.set(runId, resolve));
    const started = performance.now();
    const response = await fetch(`${api.url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'test_deterministic', run_id: runId }),
    });
    if (response.status !== 200 && response.status !== 202) {
      throw new Error(`POST /api/run answered ${response.status}: ${await response.text()}`);
    }
    await response.arrayBuffer();
    const status = await done;
    waiting.delete(runId);
    latencies.push(performance.now() - started);
    if (status !== 'success') failed++;
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < RUNS) await one(next++);
    }),
  );
  const elapsed = performance.now() - started;
  watcher.close();
  latencies.sort((a, b) => a - b);
  return {
    runsPerSecond: (RUNS / elapsed) * 1000,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    failed,
  };
}

const HELD = 200;
const HOLD_WORKFLOW = `name: bench_hold
description: Benchmark only - two echo steps, then holds for hold_ms.
inputs:
  hold_ms: { type: integer, default: 8000 }
steps:
  - { name: a, agent: tier0_echo, inputs: { text: one } }
  - { name: b, agent: tier0_echo, depends_on: [a], inputs: { text: two } }
  - name: hold
    agent: tier0_sleep
    depends_on: [b]
    inputs:
      ms: \${inputs.hold_ms}
`;

interface MemoryReport {
  perActiveBytes: number;
  perFinishedBytes: number;
}

/**
 * Redis memory per active run: `used_memory` with {@link HELD} runs of `bench_hold` all
 * executing (claim, job, event stream so far) against before them, and once they ended (what
 * stays until the streams expire: the streams and the history notices).
 */
async function redisMemory(api: ClusterProcess, client: Redis): Promise<MemoryReport> {
  const used = async (): Promise<number> => {
    const info = await client.info('memory');
    return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
  };
  const before = await used();
  await Promise.all(
    Array.from({ length: HELD }, async (_, i) => {
      const response = await fetch(`${api.url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'bench_hold', run_id: `held-${i}` }),
      });
      if (response.status !== 200) {
        throw new Error(`POST answered ${response.status}: ${await response.text()}`);
      }
      await response.arrayBuffer();
    }),
  );
  // Every run holding: its claim marked running and its stream past step b's end.
  const holding = async (): Promise<boolean> => {
    const lengths = await Promise.all(
      Array.from({ length: HELD }, (_, i) => client.xlen(`agentic:run:held-${i}:events`)),
    );
    return lengths.every((length) => length >= 6);
  };
  while (!(await holding())) await new Promise((resolve) => setTimeout(resolve, 100));
  const active = await used();
  while ((await client.scard('agentic:claims:active')) > 0) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const finished = await used();
  return {
    perActiveBytes: (active - before) / HELD,
    perFinishedBytes: (finished - before) / HELD,
  };
}

interface ProcessLatency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  events: number;
  runs: number;
}

/**
 * The cross-instance latency between processes: a worker emits a run's event (its `timestamp`,
 * taken at emit), Redis carries it, the api instance relays it to a WebSocket client here,
 * which notes the wall clock on arrival (all on one machine: one clock; 1 ms resolution).
 * `concurrency` runs of `test_deterministic` at a time, each watched from before it starts.
 */
async function crossProcessLatency(
  api: ClusterProcess,
  runs: number,
  concurrency: number,
): Promise<ProcessLatency> {
  const latencies: number[] = [];
  const wsBase = api.url.replace(/^http/, 'ws');
  let next = 0;
  const one = async (): Promise<void> => {
    const runId = `latency-${concurrency}-${next++}`;
    const ws = new WebSocket(`${wsBase}/ws/execution/${runId}`);
    const ended = new Promise<void>((resolve, reject) => {
      ws.on('message', (data: Buffer) => {
        const received = Date.now();
        const event = JSON.parse(data.toString('utf8')) as { type: string; timestamp: string };
        latencies.push(received - Date.parse(event.timestamp));
        if (event.type === 'workflow_end') resolve();
      });
      ws.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    // The api instance follows the run's (empty) stream once the client waits for it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const response = await fetch(`${api.url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'test_deterministic', run_id: runId }),
    });
    if (response.status !== 200) throw new Error(`POST answered ${response.status}`);
    await response.arrayBuffer();
    await ended;
    ws.close();
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < runs) await one();
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? NaN,
    events: latencies.length,
    runs,
  };
}

function row(name: string, report: LoadReport): string {
  return `| ${name} | ${report.runsPerSecond.toFixed(0)} runs/s | ${report.p50Ms.toFixed(1)} ms | ${report.p99Ms.toFixed(1)} ms | ${report.failed} |`;
}

const root = await mkdtemp(join(tmpdir(), 'agentic-bench-scale-'));
const workflowsDir = join(root, 'workflows');
await cp(join(packageRoot, 'workflows'), workflowsDir, { recursive: true });
await writeFile(join(workflowsDir, 'bench_hold.yaml'), HOLD_WORKFLOW);
const common = {
  AGENTIC_HOST: '127.0.0.1',
  AGENTIC_PORT: '0',
  AGENTIC_WORKFLOWS_DIR: workflowsDir,
  AGENTIC_NO_LLM: '1',
  AGENTIC_RATE_LIMIT_DEFAULT: '1000000/second',
  LOG_FORMAT: 'json',
};
const redis = await startTestRedis();
try {
  console.log(
    `${RUNS} runs of test_deterministic, ${CONCURRENCY} in flight; load average ${loadavg()[0]?.toFixed(1) ?? '?'}`,
  );
  const singleDir = join(root, 'single');
  const single = await spawnService('all', { ...common, AGENTIC_RUNS_DIR: singleDir }, 'dist');
  let one: LoadReport;
  try {
    await load(single, singleDir, 'warm');
    one = await load(single, singleDir, 'one');
  } finally {
    single.child.kill('SIGTERM');
    await single.exit;
  }
  const clusterDir = join(root, 'cluster');
  const cluster = await startCluster({
    redisUrl: redis.url,
    runsDir: clusterDir,
    workflowsDir,
    apis: 1,
    workers: 2,
    // Every held run executes at once for the memory figure (the loads keep 20 in flight).
    env: { ...common, AGENTIC_WORKER_CONCURRENCY: String(HELD) },
    entry: 'dist',
  });
  let scaled: LoadReport;
  let memory: MemoryReport;
  let alone: ProcessLatency;
  let loaded: ProcessLatency;
  const client = new Redis(redis.url);
  try {
    await load(cluster.apis[0]!, clusterDir, 'warm');
    scaled = await load(cluster.apis[0]!, clusterDir, 'scaled');
    alone = await crossProcessLatency(cluster.apis[0]!, 300, 1);
    loaded = await crossProcessLatency(cluster.apis[0]!, 300, LATENCY_CONCURRENCY);
    memory = await redisMemory(cluster.apis[0]!, client);
  } finally {
    client.disconnect();
    await cluster.stop();
  }
  console.log('');
  console.log('| deployment | completed runs/s | POST → run file p50 | p99 | failed |');
  console.log('| --- | --- | --- | --- | --- |');
  console.log(row('1 process (all, no Redis)', one));
  console.log(row('1 api + 2 workers + Redis', scaled));
  console.log(
    `\nRedis memory per run (${HELD} runs of bench_hold, 6 events each so far): ${(memory.perActiveBytes / 1024).toFixed(1)} KiB while active (claim, job, event stream), ${(memory.perFinishedBytes / 1024).toFixed(1)} KiB once ended (stream and history notice, until AGENTIC_EVENT_STREAM_TTL_SECONDS)`,
  );
  console.log(
    '\ncross-process event latency (worker emits → Redis → api instance → WebSocket client; 1 ms resolution; target p99 ≤ 20 ms):',
  );
  for (const [label, figures] of [
    ['1 run at a time', alone],
    [`${LATENCY_CONCURRENCY} runs at a time`, loaded],
  ] as const) {
    console.log(
      `  ${label}: p50 ${figures.p50Ms.toFixed(0)} ms, p99 ${figures.p99Ms.toFixed(0)} ms, max ${figures.maxMs.toFixed(0)} ms over ${figures.events} events of ${figures.runs} runs`,
    );
  }
  const latency = await measureCrossInstanceLatency();
  console.log(
    `\ncross-instance event latency in one process (run on A → Redis → B → WebSocket client; A, B and the client share one event loop): p50 ${latency.p50Ms.toFixed(2)} ms, p99 ${latency.p99Ms.toFixed(2)} ms, max ${latency.maxMs.toFixed(1)} ms over ${latency.events} events of ${latency.runs} runs (target p99 ≤ 20 ms)`,
  );
} finally {
  await redis.stop();
  await rm(root, { recursive: true, force: true });
}
