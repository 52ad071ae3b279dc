/**
 * `npm run bench:llm`: the LLM layer against a fake OpenAI-compatible server on 127.0.0.1
 * (test/bench/llm-fake-server.ts, its own process).
 *
 *  1. The router's added latency per call: p50/p99 of `router.complete()` (non-streamed) minus
 *     those of a bare undici request to the same server doing the same JSON work
 *     (target: ≤ 0.3 ms at p50). BENCH_LLM_CALLS (3000) sequential calls each, after a warm-up.
 *  2. BENCH_LLM_STEPS (200) concurrent runs of a one-step LLM workflow whose answer streams
 *     (40 chunks, 25 ms apart), each watched by a WebSocket subscriber: every run's events
 *     must arrive complete (seq 0..n without a gap, ending in workflow_end), and the service's
 *     event loop must never be blocked more than 20 ms (perf_hooks monitorEventLoopDelay with a
 *     1 ms resolution, the sampling interval taken off: see {@link LOOP_SAMPLING_MS}; the
 *     clients run in their own process, test/bench/llm-clients.ts, so the figure is the
 *     service's loop). Also printed, for a loaded machine: the start burst's CPU
 *     per run (process, and the main thread's with its wait for a core, from
 *     /proc/thread-self/schedstat), and the longest main-thread CPU between two ticks of a 1 ms
 *     timer: the loop delay without the time the OS gave other processes.
 *
 * The service (this process) is pinned to one CPU and the fake server and the clients to the
 * others where `taskset` and two CPUs allow (test/bench/cpu-layout.ts; BENCH_LLM_PIN=0 turns it
 * off); the layout used is printed first. BENCH_LLM_CPU_PROF=<file> writes a CPU profile of the
 * service's main thread during the start burst (open it in Chrome DevTools).
 * BENCH_LLM_HEAP_SNAPSHOT=<prefix> writes heap snapshots `<prefix>-before.heapsnapshot` (after
 * the warm-up) and `<prefix>-burst.heapsnapshot` (once every subscriber is connected): what the
 * starting runs keep alive, which the burst's scavenges copy (the snapshots stall the loop: not
 * for figures).
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { Agent, request } from 'undici';
import type * as ConfigModule from '../../src/config/index.js';
import type * as ServerModule from '../../src/http/server.js';
import type * as HttpModule from '../../src/llm/http.js';
import type * as OpenAiModule from '../../src/llm/providers/openai.js';
import type * as RouterModule from '../../src/llm/router.js';
import type * as LogModule from '../../src/log.js';
import { planCpuLayout } from './cpu-layout.js';
import { loadShipped } from './shipped.js';
import { mainThreadSched } from './thread-sched.js';
import type { ClientResult } from './llm-clients.js';

const { loadConfig } = await loadShipped<typeof ConfigModule>('src/config/index');
const { startServer } = await loadShipped<typeof ServerModule>('src/http/server');
const { createHttpClient } = await loadShipped<typeof HttpModule>('src/llm/http');
const { createOpenAiCompatibleProvider } = await loadShipped<typeof OpenAiModule>(
  'src/llm/providers/openai',
);
const { createLlmRouter } = await loadShipped<typeof RouterModule>('src/llm/router');
const { createSilentLogger } = await loadShipped<typeof LogModule>('src/log');

const CALLS = Number(process.env.BENCH_LLM_CALLS ?? 3000);
const STEPS = Number(process.env.BENCH_LLM_STEPS ?? 200);
const CPU_PROF = process.env.BENCH_LLM_CPU_PROF;
const HEAP_SNAPSHOT = process.env.BENCH_LLM_HEAP_SNAPSHOT;
const here = fileURLToPath(new URL('.', import.meta.url));
const layout = planCpuLayout();

function percentile(sorted: number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
    NaN
  );
}
const ms = (value: number): string => `${value.toFixed(3)} ms`;

/**
 * The loop-delay histograms' sampling interval (ms). monitorEventLoopDelay records the whole
 * interval between two ticks of its timer, the resolution included (an idle loop reads about
 * `resolution` ms, not 0), so the delay is a reading minus this. A loop blocked for B ms reads
 * between B and B + resolution: at 1 ms the delay is within 1 ms of the longest block. (This
 * bench used 10 ms and reported the readings as they were, about 10 ms above the delay.)
 */
const LOOP_SAMPLING_MS = 1;

/** The threads this process had when the bench began (Node's and V8's own: GC helpers, pool). */
const initialThreads = new Set(listThreads());

function listThreads(): string[] {
  try {
    return readdirSync('/proc/self/task');
  } catch {
    return []; // not Linux
  }
}

/**
 * CPU time (ms) of this process's threads other than the main one, in two groups: those it
 * started with (V8's GC and compiler helpers, the libuv thread pool) and those started since
 * (the run-file write worker), from /proc/self/task (Linux; zeros elsewhere). Pinned to the
 * service's CPU, these are what its main thread waits for besides other processes.
 */
function otherThreadsCpu(): { initial: number; later: number } {
  const cpu = { initial: 0, later: 0 };
  for (const tid of listThreads()) {
    if (tid === String(process.pid)) continue;
    try {
      const run = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
      cpu[initialThreads.has(tid) ? 'initial' : 'later'] += run / 1e6;
    } catch {
      // the thread ended meanwhile
    }
  }
  return cpu;
}

/** The main thread's garbage collections (start and duration, ms), observed from the start. */
const gcPauses: { start: number; duration: number }[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.push({ start: entry.startTime, duration: entry.duration });
  }
}).observe({ entryTypes: ['gc'] });

/** The GC time within [from, to] (performance.now() ms). */
function gcWithin(from: number, to: number): number {
  let sum = 0;
  for (const pause of gcPauses) {
    sum += Math.max(0, Math.min(to, pause.start + pause.duration) - Math.max(from, pause.start));
  }
  return sum;
}

/** What {@link monitorLoopCpu} found. */
interface LoopCpu {
  /** The longest main-thread CPU between two ticks (ms). */
  busiest: number;
  /** The garbage collectors' pauses within that stretch (ms). */
  busiestGc: number;
  /** The longest GC pause of the whole phase (ms). */
  longestGc: number;
}

/**
 * The longest stretch of main-thread CPU between two ticks of a 1 ms timer: what the loop delay
 * would be if this process had a core to itself (time spent waiting for a core is left out, as
 * it is not the service's doing), with the GC pauses inside it. Linux only (undefined elsewhere).
 */
function monitorLoopCpu(): { stop: () => LoopCpu | undefined } {
  let last = mainThreadSched()?.cpu;
  if (last === undefined) return { stop: () => undefined };
  const from = performance.now();
  let lastTick = from;
  let max = 0;
  let window = [from, from];
  const timer = setInterval(() => {
    const tick = performance.now();
    const now = mainThreadSched()?.cpu ?? last ?? 0;
    if (now - (last ?? now) > max) {
      max = now - (last ?? now);
      window = [lastTick, tick];
    }
    last = now;
    lastTick = tick;
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      const to = performance.now();
      const longestGc = gcPauses
        .filter((pause) => pause.start >= from && pause.start <= to)
        .reduce((longest, pause) => Math.max(longest, pause.duration), 0);
      return { busiest: max, busiestGc: gcWithin(window[0] ?? from, window[1] ?? to), longestGc };
    },
  };
}

/**
 * Profiles this process's main thread (100 µs sampling) until `stop`, which writes the profile
 * to `file`. Profiling slows the service: the figures of a profiled run are not comparable.
 */
async function startCpuProfile(file: string): Promise<{ stop: () => Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    stop: async () => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      await writeFile(file, JSON.stringify(profile));
      console.log(`CPU profile of the start burst written to ${file}`);
    },
  };
}

/** Writes a heap snapshot of this process to `<prefix>.heapsnapshot` (blocks for seconds). */
function writeSnapshot(prefix: string): void {
  console.log(`heap snapshot written to ${writeHeapSnapshot(`${prefix}.heapsnapshot`)}`);
}

async function startFake(): Promise<{ url: string; stop: () => void }> {
  const child = fork(join(here, 'llm-fake-server.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  layout.pinHelper(child.pid);
  const url = await new Promise<string>((resolve) => {
    child.stdout?.once('data', (data: Buffer) => resolve(data.toString().trim()));
  });
  return { url, stop: () => child.kill() };
}

/**
 * Times `a` and `b` in alternating pairs (which goes first alternates too), so drift on a shared
 * machine hits both alike; the added latency is the median of the per-pair differences.
 */
async function timePairs(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a: number[]; b: number[]; diff: number[] }> {
  for (let i = 0; i < Math.min(500, CALLS); i++) {
    await a();
    await b();
  }
  const out = { a: [] as number[], b: [] as number[], diff: [] as number[] };
  const time = async (call: () => Promise<unknown>): Promise<number> => {
    const start = performance.now();
    await call();
    return performance.now() - start;
  };
  for (let i = 0; i < CALLS; i++) {
    const first = i % 2 === 0;
    const ta = first ? await time(a) : 0;
    const tb = await time(b);
    const ta2 = first ? ta : await time(a);
    out.a.push(ta2);
    out.b.push(tb);
    out.diff.push(tb - ta2);
  }
  for (const list of Object.values(out)) list.sort((x, y) => x - y);
  return out;
}

async function routerOverhead(url: string): Promise<void> {
  const body = {
    model: 'bench',
    messages: [
      { role: 'system', content: 'persona' },
      { role: 'user', content: 'prompt' },
    ],
  };
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const http = createHttpClient({ provider: 'bench' });
  const provider = createOpenAiCompatibleProvider({
    name: 'bench',
    http,
    chatUrl: () => `${url}/v1/chat/completions`,
    modelsUrl: `${url}/v1/models`,
    headers: {},
  });
  const router = createLlmRouter({
    providers: { get: () => provider, missing: () => undefined },
    chains: { '2': ['bench:bench'] },
  });
  const signal = new AbortController().signal;
  const times = await timePairs(
    async () => {
      const response = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher: agent,
      });
      JSON.parse(await response.body.text());
    },
    () => router.complete({ tier: 2, system: 'persona', prompt: 'prompt', signal }),
  );
  console.log(
    `bare undici request: p50 ${ms(percentile(times.a, 50))}, p99 ${ms(percentile(times.a, 99))} (${CALLS} calls)`,
  );
  console.log(
    `router.complete():   p50 ${ms(percentile(times.b, 50))}, p99 ${ms(percentile(times.b, 99))}`,
  );
  console.log(
    `router added latency (median of paired differences): ${ms(percentile(times.diff, 50))} (target ≤ 0.3 ms)`,
  );
  await agent.close();
  await http.close();
}

async function streamedSteps(url: string): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'agentic-bench-llm-'));
  const workflowsDir = join(root, 'workflows');
  await mkdir(workflowsDir);
  await writeFile(
    join(workflowsDir, 'stream_step.yaml'),
    'name: stream_step\nsteps:\n  - name: write\n    agent: tier2_writer\n    description: Write.\n    inputs: { n: "${inputs.n}" }\n    outputs: { result: result }\ninputs:\n  n: { type: integer }\n',
  );
  const config = loadConfig({
    AGENTIC_HOST: '127.0.0.1',
    AGENTIC_PORT: '0',
    AGENTIC_RUNS_DIR: join(root, 'runs'),
    AGENTIC_WORKFLOWS_DIR: workflowsDir,
    AGENTIC_RATE_LIMIT_DEFAULT: '1000000/second',
    AGENTIC_MODEL_TIER_2: 'openai:bench',
    AGENTIC_LLM_MAX_IN_FLIGHT: String(STEPS),
    // Every step's run is active at once: the active-run cap must admit them all.
    AGENTIC_MAX_ACTIVE_RUNS: String(STEPS),
    OPENAI_BASE_URL: `${url}/v1`,
    OLLAMA_HOST: url,
  });
  const service = await startServer({ config, logger: createSilentLogger() });
  // The clients (POSTs and WebSocket subscribers) run in their own process: the loop delay
  // measured here is then the service's alone.
  const clients = fork(join(here, 'llm-clients.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  layout.pinHelper(clients.pid);
  const batch = (count: number, prefix: string, onOpen: () => void = () => undefined) =>
    new Promise<ClientResult[]>((resolve, reject) => {
      const onMessage = (message: { open?: true; results?: ClientResult[]; error?: string }) => {
        if (message.open === true) onOpen();
        else {
          clients.off('message', onMessage);
          if (message.results !== undefined) resolve(message.results);
          else reject(new Error(message.error ?? 'the client process failed'));
        }
      };
      clients.on('message', onMessage);
      clients.send({ url: service.url, count, prefix });
    });
  // A first small batch loads and compiles every code path (tsx transpiles modules on first
  // import, on the main thread) before the loop delay is measured.
  await batch(10, 'warm');
  if (HEAP_SNAPSHOT !== undefined) writeSnapshot(`${HEAP_SNAPSHOT}-before`);
  // Two phases: the start burst (200 POST /api/run, 200 WebSocket upgrades, 200 run starts at
  // once) and the streaming phase once every subscriber is connected (the relay of chunks).
  const profile = CPU_PROF === undefined ? undefined : await startCpuProfile(CPU_PROF);
  let profileWritten: Promise<void> | undefined;
  const burstDelay = monitorEventLoopDelay({ resolution: LOOP_SAMPLING_MS });
  const streamDelay = monitorEventLoopDelay({ resolution: LOOP_SAMPLING_MS });
  burstDelay.enable();
  const burstLoopCpu = monitorLoopCpu();
  let streamLoopCpu: ReturnType<typeof monitorLoopCpu> | undefined;
  let burstBusiest: LoopCpu | undefined;
  const cpuBefore = process.cpuUsage();
  const schedBefore = mainThreadSched();
  const threadsBefore = otherThreadsCpu();
  let threadsBurst = threadsBefore;
  const started = performance.now();
  let burst = { ms: 0, cpu: process.cpuUsage(cpuBefore), sched: schedBefore };
  const results = await batch(STEPS, 'bench', () => {
    burstDelay.disable();
    burst = {
      ms: performance.now() - started,
      cpu: process.cpuUsage(cpuBefore),
      sched: mainThreadSched(),
    };
    threadsBurst = otherThreadsCpu();
    streamDelay.enable();
    burstBusiest = burstLoopCpu.stop();
    streamLoopCpu = monitorLoopCpu();
    profileWritten = profile?.stop();
    if (HEAP_SNAPSHOT !== undefined) writeSnapshot(`${HEAP_SNAPSHOT}-burst`);
  });
  await profileWritten;
  clients.kill();
  const elapsed = performance.now() - started;
  burstDelay.disable();
  streamDelay.disable();
  const streamBusiest = streamLoopCpu?.stop();
  const cpu = process.cpuUsage(cpuBefore);
  // CPU time over wall time: far below 100 % with the loop delayed means the process was waiting
  // for a core (other processes), not running our code.
  const cpuShare = ((cpu.user + cpu.system) / 1000 / elapsed) * 100;
  const lost = results.filter((r) => !r.complete).length;
  const failed = results.filter((r) => r.status !== 'success').length;
  const events = results.reduce((sum, r) => sum + r.events, 0);
  const deltas = results.reduce((sum, r) => sum + r.deltas, 0);
  console.log(
    `${STEPS} concurrent streamed steps: ${elapsed.toFixed(0)} ms, ${events} events relayed (${deltas} token_delta), runs with a gap: ${lost}, failed runs: ${failed}`,
  );
  const delay = (reading: number): string =>
    `${Math.max(0, reading / 1e6 - LOOP_SAMPLING_MS).toFixed(1)} ms`;
  const fmtDelay = (h: typeof burstDelay): string =>
    `max ${delay(h.max)}, p99 ${delay(h.percentile(99))}`;
  console.log(
    `event loop delay while ${STEPS} runs start: ${fmtDelay(burstDelay)}; while they stream: ${fmtDelay(streamDelay)} (limit 20 ms); this process had ${cpuShare.toFixed(0)} % of a core, load average ${loadavg()[0]?.toFixed(1) ?? '?'}`,
  );
  // The burst's cost per run (a POST /api/run, a WebSocket upgrade, a run start, and the
  // streaming of the runs already going): a machine-independent reading of the start path.
  const perRun = (microseconds: number): string => `${(microseconds / STEPS).toFixed(0)} µs`;
  const main =
    burst.sched === undefined || schedBefore === undefined
      ? ''
      : `, main thread ${perRun((burst.sched.cpu - schedBefore.cpu) * 1000)} (it waited ${(burst.sched.queued - schedBefore.queued).toFixed(0)} ms for a core)`;
  console.log(
    `start burst: ${burst.ms.toFixed(0)} ms until every subscriber was connected; CPU per run: process ${perRun(burst.cpu.user + burst.cpu.system)}${main}`,
  );
  if (threadsBefore.initial + threadsBefore.later > 0) {
    console.log(
      `the service's other threads during the burst: ${(threadsBurst.initial - threadsBefore.initial).toFixed(0)} ms CPU in Node's and V8's (GC helpers, thread pool), ${(threadsBurst.later - threadsBefore.later).toFixed(0)} ms in threads started since (the run-file write worker)`,
    );
  }
  if (burstBusiest !== undefined && streamBusiest !== undefined) {
    const fmt = (found: LoopCpu): string =>
      `${found.busiest.toFixed(1)} ms (GC ${found.busiestGc.toFixed(1)} ms of it; longest GC pause ${found.longestGc.toFixed(1)} ms)`;
    console.log(
      `longest main-thread CPU between two 1 ms ticks (the loop delay without the waits for a core): ${fmt(burstBusiest)} while runs start, ${fmt(streamBusiest)} while they stream`,
    );
  }
  await service.close();
  await rm(root, { recursive: true, force: true });
  if (lost > 0 || failed > 0) process.exitCode = 1;
}

console.log(`CPU layout: ${layout.description}`);
const loadBefore = loadavg()[0] ?? 0;
if (layout.pinned && loadBefore >= 0.5) {
  // Pinning isolates the service from its own load generators, not from other processes: they
  // still run on its CPU, and a pinned process cannot move to a freer one.
  console.log(
    `note: load average ${loadBefore.toFixed(1)} before the bench: other processes share the service's CPU, so its figures include their work (BENCH_LLM_PIN=0 lets it use every CPU)`,
  );
}
layout.pinService();
const fake = await startFake();
try {
  await routerOverhead(fake.url);
  await streamedSteps(fake.url);
} finally {
  fake.stop();
}
