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
 *
 * Durable runs/s (issue 26, point 7): the same closed loop (c=10) against a fresh service per
 * runs directory, for BENCH_DURABLE_SECONDS (20; the first fifth a warm-up) each, alternating
 * BENCH_DURABLE_ROUNDS (2) times: the runs directory on ext4 (a temp dir under the OS temp
 * directory), on tmpfs (/dev/shm, where an fsync costs nothing), and on ext4 with
 * AGENTIC_WRITE_SYNC=off (no fsync at all: durability off), with the service's CPU per run.
 * Ratios (ext4 / tmpfs, on / off) are printed in the same run. BENCH_ONLY=durable runs this
 * phase alone (for A/B runs of two builds).
 */
import autocannon from 'autocannon';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { WebSocket } from 'ws';
import { BenchService, benchWorkflowsDir, fmt, now, postRun, serviceEnv } from './bench-service.js';
import type { CpuSample } from './http-bench-server.js';
import { startTraceSink } from './trace-sink.js';

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
const DURABLE_SECONDS = env('BENCH_DURABLE_SECONDS', 20);
const DURABLE_ROUNDS = env('BENCH_DURABLE_ROUNDS', 2);
const ONLY_DURABLE = process.env.BENCH_ONLY === 'durable';

function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}
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

async function benchFanout(service: BenchService, pool: Pool): Promise<FanoutResult> {
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

async function benchRuns(service: BenchService, pool: Pool): Promise<RunsResult> {
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

interface DurableResult {
  runsPerSecond: number;
  cpuPerRunMicros: number;
  runs: number;
  failed: number;
}

/** One service on `runsDir` (with `extraEnv`), driven at c=10 for DURABLE_SECONDS. */
async function benchDurable(
  runsDir: string,
  workflowsDir: string,
  extraEnv: NodeJS.ProcessEnv,
  round: number,
): Promise<DurableResult> {
  const service = new BenchService({
    env: {
      ...serviceEnv({ runsDir, workflowsDir, adapter: ADAPTER, metrics: METRICS, logging: false }),
      ...extraEnv,
    },
    name: `durable service ${runsDir}`,
  });
  try {
    await service.ready();
    const pool = new Pool(service.url, { connections: CONCURRENCY });
    const start = now();
    const warmupEnds = start + DURABLE_SECONDS * 1000 * WARMUP_SHARE;
    const deadline = start + DURABLE_SECONDS * 1000;
    let next = 0;
    let failed = 0;
    let measured = 0;
    let measuredFrom: number | undefined;
    let cpuFrom: Promise<CpuSample> | undefined;
    const worker = async (): Promise<void> => {
      while (now() < deadline) {
        const runId = `durable-${round}-${next++}`;
        const waiter = service.waitDone(runId);
        await postRun(pool, { workflow: 'test_deterministic', run_id: runId });
        const { status } = await waiter;
        if (status !== 'success') failed += 1;
        if (measuredFrom !== undefined) measured += 1;
        else if (now() >= warmupEnds) {
          measuredFrom = now();
          cpuFrom = service.cpu();
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const endedAt = now();
    const cpuTo = await service.cpu();
    const from = await cpuFrom;
    await pool.close();
    const cpuRuns = from === undefined ? 0 : cpuTo.finishedRuns - from.finishedRuns;
    return {
      runsPerSecond: measured / ((endedAt - (measuredFrom ?? endedAt)) / 1000),
      cpuPerRunMicros:
        from === undefined || cpuRuns <= 0
          ? Number.NaN
          : (cpuTo.cpuMicros - from.cpuMicros) / cpuRuns,
      runs: next,
      failed,
    };
  } finally {
    await service.stop();
  }
}

const DURABLE_MODES = [
  { label: 'ext4, durable', base: tmpdir(), env: {} },
  { label: 'tmpfs, durable', base: '/dev/shm', env: {} },
  { label: 'ext4, AGENTIC_WRITE_SYNC=off', base: tmpdir(), env: { AGENTIC_WRITE_SYNC: 'off' } },
] as const;

/** Durable runs/s on ext4 and tmpfs, and with durability off; see the module comment. */
async function benchDurability(workflowsDir: string): Promise<void> {
  console.log(
    `[durable] ${DURABLE_ROUNDS} alternating rounds of ${DURABLE_SECONDS} s per mode (c=${CONCURRENCY}) ...`,
  );
  const results = DURABLE_MODES.map(() => [] as DurableResult[]);
  for (let round = 0; round < DURABLE_ROUNDS; round++) {
    for (const [index, mode] of DURABLE_MODES.entries()) {
      const runsDir = await mkdtemp(join(mode.base, 'agentic-bench-durable-'));
      try {
        const result = await benchDurable(runsDir, workflowsDir, mode.env, round);
        results[index]!.push(result);
        console.log(
          `  round ${round + 1} ${mode.label}: ${fmt(result.runsPerSecond, 0)} runs/s, ${fmt(result.cpuPerRunMicros, 0)} µs CPU/run (${result.runs} runs, ${result.failed} failed)`,
        );
      } finally {
        await rm(runsDir, { recursive: true, force: true });
      }
    }
  }
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const rate = results.map((list) => mean(list.map((r) => r.runsPerSecond)));
  const cpu = results.map((list) => mean(list.map((r) => r.cpuPerRunMicros)));
  console.log('');
  for (const [index, mode] of DURABLE_MODES.entries()) {
    console.log(
      `| ${mode.label.padEnd(30)} | ${fmt(rate[index]!, 0).padStart(6)} runs/s | ${fmt(cpu[index]!, 0).padStart(5)} µs CPU/run |`,
    );
  }
  console.log(
    `ext4 / tmpfs: ${fmt((rate[0]! / rate[1]!) * 100, 0)} % of the runs/s (target ≥ 85 %); durable / off on ext4: ${fmt((rate[0]! / rate[2]!) * 100, 0)} %; CPU/run ext4 vs tmpfs ${fmt(cpu[0]! / cpu[1]!, 2)}×`,
  );
}

async function main(): Promise<void> {
  if (ONLY_DURABLE) {
    const workflowsDir = await benchWorkflowsDir();
    try {
      await benchDurability(workflowsDir);
    } finally {
      await rm(workflowsDir, { recursive: true, force: true });
    }
    return;
  }
  const runsDir = await mkdtemp(join(tmpdir(), 'agentic-bench-runs-'));
  const workflowsDir = await benchWorkflowsDir({ 'bench_fanout.yaml': FANOUT_WORKFLOW });
  const sink = TRACING ? await startTraceSink() : undefined;
  const service = new BenchService({
    env: serviceEnv({
      runsDir,
      workflowsDir,
      adapter: ADAPTER,
      metrics: METRICS,
      otlpEndpoint: sink?.url,
      logging: LOGGING,
    }),
    cpuProfDir: CPU_PROF_DIR,
    discardStdout: LOGGING,
  });
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
    await service.stop();
    await benchDurability(workflowsDir);

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

await main();
