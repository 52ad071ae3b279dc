/**
 * The service under test for `npm run bench:http`, run as a child process so the load generator
 * does not share its event loop. Reports over IPC: `ready` (url), `done` (run id, time its final
 * run file was written), `event` timings of one watched run, and on request `cpu` (the
 * process's CPU time and the runs it finished so far) and `rss`.
 */
import type * as ConfigModule from '../../src/config/index.js';
import type * as RuntimeModule from '../../src/engine/runtime.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import type * as ServerModule from '../../src/http/server.js';
import type * as LogModule from '../../src/log.js';
import type * as TracingModule from '../../src/tracing/index.js';
import { loadShipped } from './shipped.js';
import { mainThreadSched } from './thread-sched.js';

const { loadConfig, packageVersion } = await loadShipped<typeof ConfigModule>('src/config/index');
const { createRuntime } = await loadShipped<typeof RuntimeModule>('src/engine/runtime');
const { startServer } = await loadShipped<typeof ServerModule>('src/http/server');
const { createLogger, createSilentLogger } = await loadShipped<typeof LogModule>('src/log');
const { createOtlpTracerProvider } = await loadShipped<typeof TracingModule>('src/tracing/index');

export type ParentMessage =
  { type: 'cpu' } | { type: 'rss' } | { type: 'watch'; runId: string } | { type: 'stop' };

/** The service's CPU use so far, with the runs it finished so far (taken together). */
export interface CpuSample {
  /** process.cpuUsage() user + system, every thread (write thread, thread pool), µs. */
  cpuMicros: number;
  /**
   * The main thread's share of cpuMicros (µs, /proc/thread-self/schedstat; undefined off
   * Linux): the rest is V8's GC and compiler helpers, the thread pool and worker threads.
   */
  mainCpuMicros: number | undefined;
  /** Event-loop active time (main thread), ms. */
  loopActiveMs: number;
  /** Runs whose final record (success or failed) was written. */
  finishedRuns: number;
  /** When the sample was taken: CLOCK_MONOTONIC, ms (the same clock as the bench's). */
  at: number;
}

export type ChildMessage =
  | { type: 'ready'; url: string }
  | { type: 'done'; runs: { runId: string; at: number; status: string }[] }
  | { type: 'event'; runId: string; seq: number; at: number; eventType: WorkflowEvent['type'] }
  | ({ type: 'cpu' } & CpuSample)
  | {
      type: 'rss';
      rss: number;
      heapUsed: number;
      hub: { activeRuns: number; finishedRuns: number; listeners: number };
      historySize: number;
      /** CPU the two forced GCs of this sample took, µs (not the service's own work). */
      gcCpuMicros: number;
    };

// CLOCK_MONOTONIC is one clock for every process on the machine; performance.timeOrigin is
// not exact enough to compare times taken in two processes.
const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const send = (message: ChildMessage): void => {
  process.send?.(message);
};

const config = loadConfig(process.env);
// BENCH_LOG=1: the service logs as in production (JSON, LOG_LEVEL, one access record per
// request) to its stdout, which the bench discards; otherwise silent.
const logger =
  process.env.BENCH_LOG === '1'
    ? createLogger({ format: 'json', level: config.logLevel })
    : createSilentLogger();
// The same runtime startServer would build, created here so the bench's listener is the first
// subscriber: an event's time is taken before the hub fans it out.
// AGENTIC_TRACING=1: the provider startServer would make, shared by this runtime and the app.
const tracerProvider = config.tracing
  ? createOtlpTracerProvider({
      protocol: config.otlpProtocol,
      endpoint: config.otlpEndpoint,
      serviceVersion: packageVersion,
    })
  : undefined;
const runtime = createRuntime({
  ...(tracerProvider === undefined ? {} : { tracerProvider }),
  workflowsDir: config.workflowsDir,
  runsDir: config.runsDir,
  noLlm: config.noLlm,
  maxConcurrency: config.maxConcurrency,
  maxActiveRuns: config.maxActiveRuns,
  defaultAdapter: config.defaultAdapter,
  writeSync: config.writeSync,
  logger,
});
let watched: string | undefined;
runtime.subscribe((event) => {
  if (event.run_id === watched) {
    send({ type: 'event', runId: event.run_id, seq: event.seq, at: now(), eventType: event.type });
  }
});
const running = await startServer({
  config,
  logger,
  runtime,
  ...(tracerProvider === undefined ? {} : { tracerProvider }),
});
// Finished runs are reported in one IPC message per event-loop turn: the time of each is taken
// when its final record is written, so batching costs the service less without moving the times.
let finished: { runId: string; at: number; status: string }[] = [];
let finishedRuns = 0;
running.runtime.onRecord((record) => {
  if (record.status === 'success' || record.status === 'failed') {
    finishedRuns += 1;
    if (finished.length === 0) {
      setImmediate(() => {
        const runs = finished;
        finished = [];
        send({ type: 'done', runs });
      });
    }
    finished.push({ runId: record.run_id, at: now(), status: record.status });
  }
});

function cpuSample(): CpuSample {
  const cpu = process.cpuUsage();
  const mainCpu = mainThreadSched()?.cpu;
  return {
    cpuMicros: cpu.user + cpu.system,
    mainCpuMicros: mainCpu === undefined ? undefined : mainCpu * 1000,
    loopActiveMs: performance.eventLoopUtilization().active,
    finishedRuns,
    at: now(),
  };
}

process.on('message', (message: ParentMessage) => {
  switch (message.type) {
    case 'cpu':
      send({ type: 'cpu', ...cpuSample() });
      break;
    case 'rss': {
      const before = cpuSample().cpuMicros;
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
      const memory = process.memoryUsage();
      send({
        type: 'rss',
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        hub: running.hub.stats(),
        historySize: running.history.size,
        gcCpuMicros: cpuSample().cpuMicros - before,
      });
      break;
    }
    case 'watch':
      watched = message.runId;
      break;
    case 'stop':
      stopping = true;
      void running
        .close()
        .then(() => tracerProvider?.shutdown())
        .then(() => process.disconnect());
      break;
    default: {
      const exhaustive: never = message;
      throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
    }
  }
});
// The bench stops the service with `stop`, which disconnects once closed; a disconnect without
// it means the bench is gone (crashed or killed): nothing is left to serve, so do not linger.
let stopping = false;
process.once('disconnect', () => {
  if (!stopping) process.exit(1);
});
send({ type: 'ready', url: running.url });
