/**
 * `npm run bench:overhead`: what metrics (AGENTIC_METRICS=1) and tracing (AGENTIC_TRACING=1,
 * OTLP/HTTP to a sink in this process) cost the HTTP service, read as paired A/B ratios so the
 * load of a shared machine cancels out.
 *
 * Four services run at once (test/bench/http-bench-server.ts): off, control (a second "off",
 * the A/A pair that shows the bench's own spread), metrics on, tracing on. The same load (POST
 * /api/run of `test_deterministic`, a closed loop of 10 clients, each run done when the
 * service reports its final run file) goes to one of them at a time, in windows of
 * BENCH_OVERHEAD_WINDOW_SECONDS (3); a round gives each service one window, in the orders of a
 * Williams square (4 rounds); BENCH_OVERHEAD_ROUNDS (12) rounds, after one
 * unmeasured warm-up window each (BENCH_OVERHEAD_WARMUP_SECONDS, 3). Idle services use next to
 * no CPU, so a window measures one configuration with the machine as it is at that moment.
 *
 * Per window: runs/s, the runs the service finished between two samples taken while the load
 * is steady (the first after a tenth of the window), over the time between them on the
 * service's clock; CPU per run, the service's CPU time (user + system, every thread) since the
 * end of its previous window over the runs it finished since then, so every CPU microsecond
 * and every run of a service is counted once (its idle time between windows included: a
 * tracing service's late span exports belong to it). Per round, of both: control/off (two
 * identical services: how far the bench itself puts them apart), and metrics and tracing over
 * the mean of off and control (the baseline); reported: each configuration's median over windows and the median of the per-round
 * ratios with their spread, against the targets (≤ 5 % runs/s with metrics, ≤ 15 % with
 * tracing). Fails (exit code ≠ 0) if a service dies, a POST is refused or a run fails.
 * Knob BENCH_ADAPTER: the engine adapter runs use (native).
 *
 * BENCH_OVERHEAD_PROFILE=<dir> also runs every service under `--cpu-prof` (profiles written to
 * <dir>/<configuration>/, one per thread, kept for Chrome DevTools, with windows.json: the
 * measured windows and their runs) and reads, from the samples
 * taken inside its measured windows, the share of its main thread's busy time spent in metrics
 * code and in tracing code (test/bench/profile-share.ts): a direct reading of what each costs,
 * which the machine's load does not move the way it moves whole-service figures. Profiling
 * costs every service alike (one sample a millisecond), so the paired ratios stay comparable.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { BenchService, benchWorkflowsDir, fmt, now, postRun, serviceEnv } from './bench-service.js';
import type { CpuSample } from './http-bench-server.js';
import { profileShare } from './profile-share.js';
import { startTraceSink } from './trace-sink.js';

const env = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const ROUNDS = Math.floor(env('BENCH_OVERHEAD_ROUNDS', 12));
const WINDOW_MS = env('BENCH_OVERHEAD_WINDOW_SECONDS', 3) * 1000;
const WARMUP_MS = env('BENCH_OVERHEAD_WARMUP_SECONDS', 3) * 1000;
const ADAPTER = process.env.BENCH_ADAPTER ?? 'native';
/** Where the services' CPU profiles go (kept, to open in DevTools); undefined: not profiled. */
const PROFILE_DIR = process.env.BENCH_OVERHEAD_PROFILE;
/** A configuration's profile directory (undefined: not profiled). */
const profileDirOf = (name: string): string | undefined =>
  PROFILE_DIR === undefined ? undefined : join(PROFILE_DIR, name);
/**
 * The files of each part that a profile's samples are attributed to (substrings of script URLs):
 * the code that runs only because metrics or tracing is on.
 */
const PROFILE_PARTS = {
  metrics: [
    '/src/metrics/',
    '/src/http/middleware/metrics.',
    '/src/http/routes/metrics.',
    '/node_modules/prom-client/',
  ],
  tracing: [
    '/src/tracing/',
    '/src/engine/runtime-tracing.',
    '/src/http/middleware/tracing.',
    '/src/http/ws-upgrade-span.',
    '/node_modules/@opentelemetry/',
    '/node_modules/protobufjs/',
    '/node_modules/@protobufjs/',
  ],
} as const;
const CONCURRENCY = 10;
/** Share of a window before its steady-state sample (the clients' ramp-up is left out). */
const SETTLE_SHARE = 0.1;

/**
 * The configurations: `control` is a second service set up exactly like `off`, an A/A pair whose
 * ratio shows how far two identical services differ here (process placement, heap layout, the
 * machine's load): a metrics or tracing figure within that spread is the bench's own noise.
 */
const CONFIGS = ['off', 'control', 'metrics', 'tracing'] as const;
type ConfigName = (typeof CONFIGS)[number];
const TARGETS: Record<'metrics' | 'tracing', number> = { metrics: 0.05, tracing: 0.15 };

/**
 * The orders of a round, a Williams square: over 4 rounds each configuration takes each position
 * once and follows each other configuration once, so neither going first nor following a given
 * service favours one. Round r uses ORDERS[r % 4].
 */
const ORDERS: ConfigName[][] = [
  ['off', 'control', 'tracing', 'metrics'],
  ['control', 'metrics', 'off', 'tracing'],
  ['metrics', 'tracing', 'control', 'off'],
  ['tracing', 'off', 'metrics', 'control'],
];

interface Window {
  runsPerSecond: number;
  cpuPerRunMicros: number;
  /** The CPU time and runs cpuPerRunMicros divides. */
  cpuMicros: number;
  runs: number;
  /** The main thread's part of cpuMicros (undefined off Linux). */
  mainCpuMicros: number | undefined;
}

interface Subject {
  name: ConfigName;
  service: BenchService;
  pool: Pool;
  /** The sample at the end of its previous window (the CPU-per-run baseline). */
  last: CpuSample | undefined;
  posted: number;
  /** Its measured windows, ms on the monotonic clock (what its profile is read over). */
  windows: { from: number; to: number }[];
  /** Where its CPU profiles are written (BENCH_OVERHEAD_PROFILE). */
  profileDir: string | undefined;
}

const pct = (ratio: number): string => `${ratio >= 1 ? '+' : ''}${fmt((ratio - 1) * 100, 1)} %`;
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** Linear interpolation between closest ranks (the median of an even count is the mean). */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

/**
 * Marks a promise awaited later as handled now: if its service dies first, the error reaches the
 * bench through the clients' waits instead of crashing it as an unhandled rejection (which would
 * skip stopping the other services).
 */
function observed<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * One window of load on one service: a closed loop of {@link CONCURRENCY} clients for `ms`,
 * then the runs in flight are awaited. Returns the window's figures (undefined for a warm-up).
 */
async function window(
  subject: Subject,
  ms: number,
  measured: boolean,
): Promise<Window | undefined> {
  const { service, pool } = subject;
  const started = now();
  const ends = started + ms;
  let steady: Promise<CpuSample> | undefined;
  let end: Promise<CpuSample> | undefined;
  const client = async (): Promise<void> => {
    while (now() < ends) {
      const runId = `${subject.name}-${subject.posted++}`;
      const done = observed(service.waitDone(runId));
      await postRun(pool, { workflow: 'test_deterministic', run_id: runId });
      const { status } = await done;
      if (status !== 'success') throw new Error(`${subject.name}: run ${runId} ended ${status}`);
      const at = now();
      if (steady === undefined && at >= started + ms * SETTLE_SHARE)
        steady = observed(service.cpu());
    }
    // The first client past the deadline takes the end sample while the others still run.
    end ??= observed(service.cpu());
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
  } catch (error) {
    // A refused connection says less than which service it was.
    throw new Error(`${subject.name} service: ${(error as Error).message}`, { cause: error });
  }
  const [from, to] = await Promise.all([steady, end]);
  if (measured) subject.windows.push({ from: started, to: now() });
  const previous = subject.last;
  subject.last = to;
  if (!measured || from === undefined || to === undefined || previous === undefined) {
    if (measured) throw new Error(`${subject.name}: no steady-state sample in a window`);
    return undefined;
  }
  const steadyRuns = to.finishedRuns - from.finishedRuns;
  const runs = to.finishedRuns - previous.finishedRuns;
  if (steadyRuns <= 0 || runs <= 0) throw new Error(`${subject.name}: no run finished in a window`);
  return {
    runsPerSecond: steadyRuns / ((to.at - from.at) / 1000),
    cpuPerRunMicros: (to.cpuMicros - previous.cpuMicros) / runs,
    cpuMicros: to.cpuMicros - previous.cpuMicros,
    runs,
    mainCpuMicros:
      to.mainCpuMicros === undefined || previous.mainCpuMicros === undefined
        ? undefined
        : to.mainCpuMicros - previous.mainCpuMicros,
  };
}

/** Fails unless `/metrics` answers as the configuration says (the services are what we think). */
async function checkMetricsEndpoint(subject: Subject): Promise<void> {
  const response = await subject.pool.request({ path: '/metrics', method: 'GET' });
  const text = await response.body.text();
  const on = response.statusCode === 200 && text.includes('runs_finished_total');
  if (on !== (subject.name === 'metrics')) {
    throw new Error(
      `${subject.name}: GET /metrics → ${response.statusCode}, metrics ${on ? 'on' : 'off'}`,
    );
  }
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

function summarize(values: number[], digits = 0): string {
  return `${fmt(quantile(values, 0.5), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`;
}

/**
 * A distribution-free confidence interval of the median: [x_(k), x_(n−k+1)] of the sorted values,
 * k the largest rank with P(Binomial(n, ½) < k) ≤ 2.5 %. Undefined when n is too small for one.
 */
function medianInterval(
  values: number[],
): { low: number; high: number; level: number } | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  let below = 0; // P(X ≤ j), X ~ Binomial(n, ½)
  let term = 0.5 ** n; // P(X = j)
  let k = 0;
  for (let j = 0; j < n; j += 1) {
    below += term;
    if (below > 0.025) break;
    k = j + 1;
    term = (term * (n - j)) / (j + 1);
  }
  if (k === 0) return undefined;
  const tail = below - term;
  return { low: sorted[k - 1]!, high: sorted[n - k]!, level: 1 - 2 * tail };
}

/**
 * One paired figure: the median of the per-round ratios, its confidence interval and spread, and
 * a verdict that claims only what the interval supports.
 */
function ratioLine(
  label: string,
  ratios: number[],
  target: number | undefined,
  higherIsWorse: boolean,
): string {
  const cost = (ratio: number): number => (higherIsWorse ? ratio - 1 : 1 - ratio);
  const median = quantile(ratios, 0.5);
  const interval = medianInterval(ratios);
  let verdict = 'not resolved (too few rounds for an interval)';
  let range = '';
  if (target === undefined) verdict = 'A/A control, no target';
  if (interval !== undefined) {
    const best = Math.min(cost(interval.low), cost(interval.high));
    const worst = Math.max(cost(interval.low), cost(interval.high));
    if (target !== undefined) {
      verdict = worst <= target ? 'met' : best > target ? 'NOT met' : 'not resolved at this noise';
    }
    range = `${fmt(interval.level * 100, 0)} % interval ${pct(interval.low)} … ${pct(interval.high)}; `;
  }
  const goal = target === undefined ? '' : `target ≤ ${fmt(target * 100, 0)} %: `;
  return `${label.padEnd(30)} median ${pct(median).padStart(8)}  (${range}quartiles ${pct(quantile(ratios, 0.25))} … ${pct(quantile(ratios, 0.75))}; range ${pct(Math.min(...ratios))} … ${pct(Math.max(...ratios))})  ${goal}${verdict}`;
}

/** The share of each part in `subject`'s profile, over its measured windows. */
async function readProfile(subject: Subject): Promise<ReturnType<typeof profileShare>> {
  // One profile per thread, named CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile: the main
  // thread is thread 0 (the others are the run-file write worker).
  const files = (await readdir(subject.profileDir!)).filter((f) => /\.0\.\d+\.cpuprofile$/.test(f));
  if (files.length !== 1) throw new Error(`${subject.name}: ${files.length} main-thread profiles`);
  const share = profileShare(join(subject.profileDir!, files[0]!), subject.windows, PROFILE_PARTS);
  // V8's profile clock and the bench's are both CLOCK_MONOTONIC; no sample inside the windows
  // would mean they are not (a figure of 0 % would then be wrong, not good news).
  if (share.samples === 0) throw new Error(`${subject.name}: no profile sample in its windows`);
  return share;
}

/** One service's profile line: busy time, GC and each part's share, per run too. */
function reportProfile(
  subject: Subject,
  share: ReturnType<typeof profileShare>,
  runs: number,
): string {
  const part = (ms: number): string =>
    `${fmt((ms / share.busyMs) * 100, 2)} % (${fmt((ms * 1000) / runs, 1)} µs/run)`;
  return `${subject.name.padEnd(8)} busy ${fmt(share.busyMs / 1000, 1)} s over ${fmt(runs, 0)} runs (${fmt((share.busyMs * 1000) / runs, 0)} µs/run); GC ${part(share.gcMs)}; metrics code ${part(share.parts.metrics ?? 0)}; tracing code ${part(share.parts.tracing ?? 0)}`;
}

async function main(): Promise<void> {
  console.log(`load average at start (1, 5, 15 min): ${load()}`);
  const workflowsDir = await benchWorkflowsDir();
  const sink = await startTraceSink();
  const dirs: string[] = [workflowsDir];
  const services = new Map<ConfigName, BenchService>();
  const subjects: Subject[] = [];
  try {
    for (const name of CONFIGS) {
      const runsDir = await mkdtemp(join(tmpdir(), `agentic-bench-runs-${name}-`));
      dirs.push(runsDir);
      const profileDir = profileDirOf(name);
      if (profileDir !== undefined) {
        await rm(profileDir, { recursive: true, force: true });
        await mkdir(profileDir, { recursive: true });
      }
      const service = new BenchService({
        name: `${name} service`,
        cpuProfDir: profileDir,
        env: serviceEnv({
          runsDir,
          workflowsDir,
          adapter: ADAPTER,
          metrics: name === 'metrics',
          otlpEndpoint: name === 'tracing' ? sink.url : undefined,
          logging: false,
        }),
      });
      services.set(name, service);
    }
    await Promise.all([...services.values()].map((service) => service.ready()));
    for (const [name, service] of services) {
      const pool = new Pool(service.url, { connections: CONCURRENCY });
      const subject: Subject = {
        name,
        service,
        pool,
        last: undefined,
        posted: 0,
        windows: [],
        profileDir: profileDirOf(name),
      };
      subjects.push(subject);
      await checkMetricsEndpoint(subject);
    }
    console.log(
      `${ROUNDS} rounds × ${CONFIGS.length} windows of ${WINDOW_MS / 1000} s (${ADAPTER} adapter, concurrency ${CONCURRENCY}), after a ${WARMUP_MS / 1000} s warm-up each`,
    );
    for (const subject of subjects) await window(subject, WARMUP_MS, false);

    const results = new Map<ConfigName, Window[]>(CONFIGS.map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = ORDERS[round % ORDERS.length]!;
      const cells: string[] = [];
      for (const name of order) {
        const subject = subjects.find((s) => s.name === name)!;
        const result = (await window(subject, WINDOW_MS, true))!;
        results.get(name)!.push(result);
      }
      for (const name of CONFIGS) {
        const result = results.get(name)![round]!;
        cells.push(
          `${name} ${fmt(result.runsPerSecond, 0)} runs/s ${fmt(result.cpuPerRunMicros, 0)} µs/run`,
        );
      }
      console.log(
        `round ${String(round + 1).padStart(2)} [${order.join(', ')}] load ${loadavg()[0]!.toFixed(2)}: ${cells.join(' | ')}`,
      );
    }

    console.log('\nper configuration, median (min–max) over windows:');
    for (const name of CONFIGS) {
      const windows = results.get(name)!;
      const runsPerSecond = summarize(windows.map((w) => w.runsPerSecond));
      const cpuPerRun = summarize(windows.map((w) => w.cpuPerRunMicros));
      const runs = sum(windows.map((w) => w.runs));
      const pooled = sum(windows.map((w) => w.cpuMicros)) / runs;
      // Where it went: the main thread, or the others (V8's GC and compiler helpers, the
      // thread pool, the run-file write worker, the trace export worker).
      const main = windows.every((w) => w.mainCpuMicros !== undefined)
        ? sum(windows.map((w) => w.mainCpuMicros!)) / runs
        : undefined;
      const split =
        main === undefined
          ? ''
          : `: main thread ${fmt(main, 0)}, other threads ${fmt(pooled - main, 0)}`;
      console.log(
        `  ${name.padEnd(8)} ${runsPerSecond} runs/s   ${cpuPerRun} µs CPU per run (all windows pooled: ${fmt(pooled, 0)} µs${split})`,
      );
    }
    console.log(
      "\npaired per round (runs/s: negative is slower; CPU per run: positive is costlier): control against off, the bench's own spread; metrics and tracing against the mean of off and control in the same round:",
    );
    const off = results.get('off')!;
    const control = results.get('control')!;
    const ratios = (
      windows: Window[],
      baseline: (i: number) => { runsPerSecond: number; cpuPerRunMicros: number },
    ) => ({
      throughput: windows.map((w, i) => w.runsPerSecond / baseline(i).runsPerSecond),
      cpu: windows.map((w, i) => w.cpuPerRunMicros / baseline(i).cpuPerRunMicros),
    });
    const aa = ratios(control, (i) => off[i]!);
    console.log(`  ${ratioLine('control/off runs/s', aa.throughput, undefined, false)}`);
    console.log(`  ${ratioLine('control/off CPU per run', aa.cpu, undefined, true)}`);
    // Two baselines: a service that happens to run cheap or dear (its process's placement and
    // heap, which the control shows can differ by 10 %) moves the ratios half as much.
    const mean = (i: number) => ({
      runsPerSecond: (off[i]!.runsPerSecond + control[i]!.runsPerSecond) / 2,
      cpuPerRunMicros: (off[i]!.cpuPerRunMicros + control[i]!.cpuPerRunMicros) / 2,
    });
    for (const name of ['metrics', 'tracing'] as const) {
      const ab = ratios(results.get(name)!, mean);
      console.log(`  ${ratioLine(`${name}/baseline runs/s`, ab.throughput, TARGETS[name], false)}`);
      console.log(`  ${ratioLine(`${name}/baseline CPU per run`, ab.cpu, TARGETS[name], true)}`);
    }
    if (PROFILE_DIR !== undefined) {
      // A service writes its profile when it exits.
      await Promise.all(subjects.map((subject) => subject.service.stop()));
      console.log(
        '\nCPU profiles (main thread, samples inside the measured windows; each sample charged to the innermost script frame, Node internals to their caller):',
      );
      for (const subject of subjects) {
        const runs = sum(results.get(subject.name)!.map((w) => w.runs));
        // Beside the profiles: the windows and runs they were read over, for other readings.
        await writeFile(
          join(subject.profileDir!, 'windows.json'),
          JSON.stringify({ windows: subject.windows, runs }),
        );
        console.log(`  ${reportProfile(subject, await readProfile(subject), runs)}`);
      }
    }
  } finally {
    await Promise.all(subjects.map((subject) => subject.pool.close()));
    await Promise.all([...services.values()].map((service) => service.stop()));
    await sink.close();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
  // The tracing service flushes its spans when it stops: none means tracing was not on.
  if (sink.exports === 0) throw new Error('the tracing service exported no spans');
  console.log(
    `\ntraces: ${sink.exports} OTLP exports, ${fmt(sink.bytes / 1024 / 1024, 1)} MB received`,
  );
  console.log(`load average at end (1, 5, 15 min): ${load()}`);
}

await main();
