/**
 * `npm run bench:http`: the HTTP service under load, loopback only, bounded to a few minutes.
 *
 *  1. GET /api/health req/s (autocannon, 50 connections).
 *  2. POST /api/run of `test_deterministic` at concurrency 10 (closed loop: each of 10 workers
 *     posts a run and waits for its final run file before posting the next): sustained
 *     completed runs/s, p50/p99 from POST to final run file written, RSS after 20k and 100k runs,
 *     and the service's CPU time (user + system, every thread) per run it finished after the
 *     warm-up: robust to a shared machine, where runs/s depends on what else runs, so the
 *     figure to compare runs with metrics or tracing on and off by.
 *  3. Event delivery latency to 500 WebSocket subscribers of one run (emit time in the server →
 *     receipt time in the client, both on the same high-resolution clock).
 *
 * The runs' figures leave out a warm-up: the first min(2000, BENCH_RSS_AT / 2) runs, or the
 * first fifth of the runs phase's time budget when that ends sooner.
 *
 * The service runs in a child process (test/bench/http-bench-server.ts) in open mode with a
 * rate limit high enough not to interfere. Knobs: BENCH_RUNS (100000), BENCH_RSS_AT (20000),
 * BENCH_HEALTH_SECONDS (10), BENCH_RUN_SECONDS (time budget of the runs phase, 240),
 * BENCH_SUBSCRIBERS (500), BENCH_ADAPTER (the engine adapter runs use: native), BENCH_CPU_PROF
 * (a directory: the service writes a V8 CPU profile there on exit), BENCH_LOG (1: the service logs
 * at info as in production, to a discarded stdout), BENCH_METRICS (1: the service runs with
 * AGENTIC_METRICS=1; compare a run with and one without for the metrics overhead), BENCH_TRACING
 * (1: the service runs with AGENTIC_TRACING=1, exporting OTLP/HTTP protobuf to a sink in this
 * process that reads and drops every export; compare with a run without).
 */
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { WebSocket } from 'ws';
import type { ChildMessage, CpuSample, ParentMessage } from './http-bench-server.js';

const env = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const TOTAL_RUNS = env('BENCH_RUNS', 100_000);
const RSS_AT = Math.min(env('BENCH_RSS_AT', 20_000), TOTAL_RUNS);
/** Runs of the warm-up, not measured; it also ends after {@link WARMUP_SHARE} of the budget. */
const WARMUP_RUNS = Math.min(2_000, Math.floor(RSS_AT / 2));
/** Share of BENCH_RUN_SECONDS after which the warm-up ends anyway (short or slow runs). */
const WARMUP_SHARE = 0.2;
const HEALTH_SECONDS = env('BENCH_HEALTH_SECONDS', 10);
const RUN_SECONDS = env('BENCH_RUN_SECONDS', 240);
const SUBSCRIBERS = env('BENCH_SUBSCRIBERS', 500);
const CONCURRENCY = 10;
const ADAPTER = process.env.BENCH_ADAPTER ?? 'native';
const METRICS = process.env.BENCH_METRICS === '1';
const TRACING = process.env.BENCH_TRACING === '1';
/** BENCH_LOG=1: the service logs at info (an access record per request) to a discarded stdout. */
const LOGGING = process.env.BENCH_LOG === '1';
/** When set, the service writes a V8 CPU profile (`.cpuprofile`) into this directory on exit. */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');
// CLOCK_MONOTONIC is one clock for every process on the machine; performance.timeOrigin is
// not exact enough to compare times taken in two processes.
const now = (): number => Number(process.hrtime.bigint()) / 1e6;

function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}
const fmt = (value: number, digits = 1): string =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', {
        maximumFractionDigits: digits,
        minimumFractionDigits: digits,
      })
    : 'n/a';
const mb = (bytes: number): string => `${fmt(bytes / 1024 / 1024, 1)} MB`;

const FANOUT_WORKFLOW = `# Benchmark only: holds so subscribers can join, then a chain of echo steps.
name: bench_fanout
description: Holds for hold_ms, then runs ten chained echo steps.
version: 1
inputs:
  hold_ms:
    type: integer
    default: 3000
steps:
  - name: gate
    agent: tier0_sleep
    inputs:
      ms: \${inputs.hold_ms}
${Array.from(
  { length: 10 },
  (_, i) => `  - name: e${i + 1}
    agent: tier0_echo
    depends_on: [${i === 0 ? 'gate' : `e${i}`}]
    inputs:
      n: ${i + 1}
`,
).join('')}`;

/** The child process and its IPC reports. */
class Service {
  readonly child: ChildProcess;
  url = '';
  private readonly doneAt = new Map<string, { at: number; status: string }>();
  private readonly doneWaiters = new Map<string, (at: number, status: string) => void>();
  readonly events: { seq: number; at: number; eventType: string }[] = [];
  private rssWaiter: ((message: Extract<ChildMessage, { type: 'rss' }>) => void) | undefined;
  /** In request order: IPC messages arrive in the order they were sent. */
  private readonly cpuWaiters: ((sample: CpuSample) => void)[] = [];
  private readyWaiter: (() => void) | undefined;

  constructor(childEnv: NodeJS.ProcessEnv) {
    this.child = fork(join(here, 'http-bench-server.ts'), [], {
      env: childEnv,
      execArgv: [
        '--import',
        'tsx',
        '--expose-gc',
        // The same young-generation size as `npm start` (see README, Benchmarks).
        '--max-semi-space-size=64',
        ...(CPU_PROF_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`]),
      ],
      stdio: ['ignore', LOGGING ? 'ignore' : 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (message: ChildMessage) => this.onMessage(message));
  }

  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.readyWaiter = resolve;
      this.child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    });
  }

  private onMessage(message: ChildMessage): void {
    switch (message.type) {
      case 'ready':
        this.url = message.url;
        this.readyWaiter?.();
        break;
      case 'done':
        for (const { runId, at, status } of message.runs) {
          const waiter = this.doneWaiters.get(runId);
          if (waiter !== undefined) {
            this.doneWaiters.delete(runId);
            waiter(at, status);
          } else {
            this.doneAt.set(runId, { at, status });
          }
        }
        break;
      case 'event':
        this.events.push({ seq: message.seq, at: message.at, eventType: message.eventType });
        break;
      case 'rss':
        this.rssWaiter?.(message);
        break;
      case 'cpu':
        this.cpuWaiters.shift()?.(message);
        break;
      default: {
        const exhaustive: never = message;
        throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  send(message: ParentMessage): void {
    this.child.send(message);
  }

  /** Resolves with the time the run's final run file was written. */
  waitDone(runId: string): Promise<{ at: number; status: string }> {
    const early = this.doneAt.get(runId);
    if (early !== undefined) {
      this.doneAt.delete(runId);
      return Promise.resolve(early);
    }
    return new Promise((resolve) => {
      this.doneWaiters.set(runId, (at, status) => resolve({ at, status }));
    });
  }

  /** The service's CPU time and finished runs, taken together (no GC forced). */
  cpu(): Promise<CpuSample> {
    return new Promise((resolve) => {
      this.cpuWaiters.push(resolve);
      this.send({ type: 'cpu' });
    });
  }

  rss(): Promise<Extract<ChildMessage, { type: 'rss' }>> {
    return new Promise((resolve) => {
      this.rssWaiter = resolve;
      this.send({ type: 'rss' });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.send({ type: 'stop' });
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
  }
}

async function postRun(pool: Pool, body: Record<string, unknown>): Promise<void> {
  const response = await pool.request({
    path: '/api/run',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 && response.statusCode !== 202) {
    throw new Error(`POST /api/run → ${response.statusCode}: ${text.slice(0, 300)}`);
  }
}

async function benchHealth(
  url: string,
): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const result = await autocannon({
    url: `${url}/api/health`,
    connections: 50,
    duration: HEALTH_SECONDS,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
  };
}

interface FanoutResult {
  subscribers: number;
  liveEvents: number;
  deliveries: number;
  p50: number;
  p99: number;
  max: number;
  lastSubscriberP50: number;
  lastSubscriberMax: number;
  complete: number;
}

async function benchFanout(service: Service, pool: Pool): Promise<FanoutResult> {
  const runId = 'bench-fanout';
  service.send({ type: 'watch', runId });
  const wsUrl = `${service.url.replace(/^http/, 'ws')}/ws/execution/${runId}`;
  const done = service.waitDone(runId);
  await postRun(pool, { workflow: 'bench_fanout', run_id: runId, input_data: { hold_ms: 3000 } });
  const received: Map<number, number>[] = [];
  const sockets: WebSocket[] = [];
  // Sockets stay open after the run: a subscriber is done at the stream's last event.
  const ended: Promise<boolean>[] = [];
  const opened: Promise<void>[] = [];
  for (let i = 0; i < SUBSCRIBERS; i += 1) {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
    const times = new Map<number, number>();
    received.push(times);
    let sawEnd: (complete: boolean) => void = () => undefined;
    ended.push(new Promise((resolve) => (sawEnd = resolve)));
    ws.on('message', (data: Buffer) => {
      const at = now();
      const event = JSON.parse(data.toString('utf8')) as { seq: number; type: string };
      times.set(event.seq, at);
      if (event.type === 'workflow_end') sawEnd(true);
    });
    ws.on('error', () => undefined);
    ws.once('close', () => sawEnd(false));
    opened.push(new Promise((resolve) => ws.once('open', () => resolve())));
    sockets.push(ws);
    // Connect in waves so the handshakes do not all queue at once.
    if (i % 50 === 49) await Promise.all(opened.slice(-50));
  }
  await Promise.all(opened);
  const subscribedAt = now();
  const completes = await Promise.all(ended);
  await done;
  await Promise.all(
    sockets.map((ws) => {
      const gone = new Promise((resolve) => ws.once('close', resolve));
      ws.close();
      return gone;
    }),
  );
  const emitted = service.events.filter((event) => event.at > subscribedAt);
  const latencies: number[] = [];
  const lastSubscriber: number[] = [];
  for (const event of emitted) {
    let slowest = 0;
    for (const times of received) {
      const at = times.get(event.seq);
      if (at === undefined) continue;
      latencies.push(at - event.at);
      slowest = Math.max(slowest, at - event.at);
    }
    lastSubscriber.push(slowest);
  }
  latencies.sort((a, b) => a - b);
  lastSubscriber.sort((a, b) => a - b);
  const total = service.events.length;
  return {
    subscribers: sockets.length,
    liveEvents: emitted.length,
    deliveries: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    lastSubscriberP50: percentile(lastSubscriber, 50),
    lastSubscriberMax: lastSubscriber.at(-1) ?? Number.NaN,
    complete: completes.filter((ok, i) => ok && received[i]?.size === total).length,
  };
}

interface RunsResult {
  completed: number;
  failed: number;
  seconds: number;
  runsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  rssAt: {
    runs: number;
    rss: number;
    heapUsed: number;
    hubFinished: number;
    history: number;
  }[];
  /** The service's CPU per run finished after the warm-up (absent when none was). */
  cpu: { runs: number; perRunMicros: number; loopPerRunMicros: number } | undefined;
  stoppedEarly: boolean;
}

async function benchRuns(service: Service, pool: Pool): Promise<RunsResult> {
  const latencies = new Float64Array(TOTAL_RUNS);
  let next = 0;
  let completed = 0;
  let failed = 0;
  let measuring = false;
  let measuredFrom = 0;
  let measuredRuns = 0;
  let cpuFrom: Promise<CpuSample> | undefined;
  // CPU of the forced GCs of the RSS samples taken in the CPU window (not the service's work).
  let sampleGcMicros = 0;
  const deadline = now() + RUN_SECONDS * 1000;
  const warmupEnds = now() + RUN_SECONDS * 1000 * WARMUP_SHARE;
  let stoppedEarly = false;

  const phase = async (until: number): Promise<void> => {
    const worker = async (): Promise<void> => {
      while (next < until) {
        if (now() > deadline) {
          stoppedEarly = true;
          return;
        }
        const index = next++;
        const runId = `bench-${index}`;
        const waiter = service.waitDone(runId);
        const started = now();
        await postRun(pool, { workflow: 'test_deterministic', run_id: runId });
        const { at, status } = await waiter;
        if (status !== 'success') failed += 1;
        completed += 1;
        if (!measuring && (index >= WARMUP_RUNS || now() >= warmupEnds)) {
          measuring = true;
          measuredFrom = now();
          cpuFrom = service.cpu();
        }
        if (measuring) latencies[measuredRuns++] = at - started;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };

  const rssAt: RunsResult['rssAt'] = [];
  const sample = async (): Promise<void> => {
    const report = await service.rss();
    rssAt.push({
      runs: completed,
      rss: report.rss,
      heapUsed: report.heapUsed,
      hubFinished: report.hub.finishedRuns,
      history: report.historySize,
    });
    if (cpuFrom !== undefined) sampleGcMicros += report.gcCpuMicros;
  };
  await phase(RSS_AT);
  const pauseStart = now();
  await sample();
  // The RSS sample (two forced GCs) is not part of the sustained-throughput window.
  const pausedMs = now() - pauseStart;
  await phase(TOTAL_RUNS);
  const endedAt = now();
  const cpuTo = await service.cpu();
  await sample();
  const from = await cpuFrom;
  const cpuRuns = from === undefined ? 0 : cpuTo.finishedRuns - from.finishedRuns;
  const sorted = latencies.subarray(0, measuredRuns).sort();
  const seconds = (endedAt - measuredFrom - pausedMs) / 1000;
  return {
    completed,
    failed,
    seconds,
    runsPerSecond: measuredRuns / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    rssAt,
    cpu:
      from === undefined || cpuRuns <= 0
        ? undefined
        : {
            runs: cpuRuns,
            perRunMicros: (cpuTo.cpuMicros - from.cpuMicros - sampleGcMicros) / cpuRuns,
            loopPerRunMicros: ((cpuTo.loopActiveMs - from.loopActiveMs) * 1000) / cpuRuns,
          },
    stoppedEarly,
  };
}

async function main(): Promise<void> {
  const runsDir = await mkdtemp(join(tmpdir(), 'agentic-bench-runs-'));
  const workflowsDir = await mkdtemp(join(tmpdir(), 'agentic-bench-workflows-'));
  const shipped = join(root, 'workflows');
  for (const name of await readdir(shipped)) {
    if (name.endsWith('.yaml')) await copyFile(join(shipped, name), join(workflowsDir, name));
  }
  await writeFile(join(workflowsDir, 'bench_fanout.yaml'), FANOUT_WORKFLOW);

  // The collector stand-in: reads every export and answers an empty ExportTraceServiceResponse.
  const sink = TRACING ? await startTraceSink() : undefined;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    AGENTIC_HOST: '127.0.0.1',
    AGENTIC_PORT: '0',
    AGENTIC_RUNS_DIR: runsDir,
    AGENTIC_WORKFLOWS_DIR: workflowsDir,
    AGENTIC_RATE_LIMIT_DEFAULT: '1000000/second',
    // Runs end faster than they start, but their end records may queue: never refuse a bench run.
    AGENTIC_MAX_ACTIVE_RUNS: '1000000',
    AGENTIC_NO_LLM: '1',
    AGENTIC_DEFAULT_ADAPTER: ADAPTER,
    AGENTIC_METRICS: METRICS ? '1' : '0',
    ...(sink === undefined
      ? {}
      : {
          AGENTIC_TRACING: '1',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        }),
    LOG_LEVEL: LOGGING ? 'info' : 'silent',
  };
  delete childEnv.AGENTIC_API_KEY;
  const service = new Service(childEnv);
  try {
    await service.ready();
    console.log(
      `service at ${service.url}; runs dir ${runsDir}; metrics ${METRICS ? 'on' : 'off'}; tracing ${TRACING ? 'on' : 'off'}`,
    );
    const pool = new Pool(service.url, { connections: CONCURRENCY });

    console.log(`[1/3] GET /api/health for ${HEALTH_SECONDS} s ...`);
    const health = await benchHealth(service.url);

    // Runs before the fan-out: the 500 WebSocket connections' memory, released only gradually,
    // would otherwise inflate the first RSS sample.
    console.log(
      `[2/3] ${TOTAL_RUNS} runs of test_deterministic (${ADAPTER} adapter) at concurrency ${CONCURRENCY} ...`,
    );
    const runs = await benchRuns(service, pool);

    console.log(`[3/3] ${SUBSCRIBERS} WebSocket subscribers of one run ...`);
    const fanout = await benchFanout(service, pool);
    await pool.close();

    const first = runs.rssAt[0];
    const last = runs.rssAt.at(-1);
    const drift = first && last ? ((last.rss - first.rss) / first.rss) * 100 : Number.NaN;
    const rows: [string, string, string, string][] = [
      [
        'GET /api/health',
        `${fmt(health.rps, 0)} req/s (p99 ${health.p99} ms, errors ${health.errors})`,
        '≥ 10,000 req/s',
        '1,900 req/s',
      ],
      [
        'completed runs/s (c=10)',
        `${fmt(runs.runsPerSecond, 0)} runs/s (${runs.completed} runs, ${runs.failed} failed)`,
        '≥ 1,500 runs/s',
        '138 runs/s',
      ],
      ['POST → run file p50', `${fmt(runs.p50, 2)} ms`, '', ''],
      [
        'POST → run file p99',
        `${fmt(runs.p99, 2)} ms (max ${fmt(runs.max, 1)} ms)`,
        '≤ 50 ms',
        '223 ms',
      ],
      [
        'service CPU per run',
        runs.cpu === undefined
          ? 'n/a (no run finished after the warm-up)'
          : `${fmt(runs.cpu.perRunMicros, 0)} µs user+system, all threads (event loop busy ${fmt(runs.cpu.loopPerRunMicros, 0)} µs), over ${runs.cpu.runs} runs`,
        '',
        '',
      ],
      [
        `WS fan-out (${fanout.subscribers} subs)`,
        `per delivery p50 ${fmt(fanout.p50, 2)} / p99 ${fmt(fanout.p99, 2)} / max ${fmt(fanout.max, 1)} ms`,
        '',
        '',
      ],
      [
        'WS fan-out, last subscriber',
        `p50 ${fmt(fanout.lastSubscriberP50, 2)} / max ${fmt(fanout.lastSubscriberMax, 1)} ms over ${fanout.liveEvents} live events; ${fanout.complete}/${fanout.subscribers} got every event through workflow_end`,
        '',
        '',
      ],
      ...runs.rssAt.map((point): [string, string, string, string] => [
        `RSS after ${point.runs.toLocaleString('en-US')} runs`,
        `${mb(point.rss)} (heap ${mb(point.heapUsed)}, hub buffers ${point.hubFinished}, history ${point.history})`,
        '',
        '',
      ]),
      ['RSS drift', `${fmt(drift, 1)} %`, 'flat (± 10 %)', ''],
    ];
    const header = ['metric', 'measured', 'target', 'Python service'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]): string =>
      `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log('');
    console.log(line(header));
    console.log(line(widths.map((w) => '-'.repeat(w))));
    for (const row of rows) console.log(line(row));
    if (sink !== undefined) {
      console.log(`\ntraces: ${sink.exports} OTLP exports, ${mb(sink.bytes)} received`);
    }
    if (runs.stoppedEarly) {
      console.log(
        `\nNote: the runs phase hit its ${RUN_SECONDS} s budget after ${runs.completed} runs.`,
      );
    }
  } finally {
    await service.stop();
    await sink?.close();
    await rm(runsDir, { recursive: true, force: true });
    await rm(workflowsDir, { recursive: true, force: true });
  }
}

/** An OTLP/HTTP endpoint that counts and drops what it is sent. */
async function startTraceSink(): Promise<{
  url: string;
  exports: number;
  bytes: number;
  close(): Promise<void>;
}> {
  const stats = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (stats.bytes += chunk.length));
    req.on('end', () => {
      stats.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(stats, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

await main();
