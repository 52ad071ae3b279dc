/**
 * Cross-instance event latency through the shared replay store: two services (role `all`)
 * sharing one real redis-server and one runs directory, runs of `test_deterministic` started
 * on A, each watched by a WebSocket client on B that connected before the run started (so every
 * event reaches it live through Redis). Latency per event: A's runtime emitting it (its event
 * listener) → the client on B receiving the frame, on the one high-resolution clock of this
 * process (A, B and the clients share it, so the figure includes their contention for one
 * event loop: an upper bound of what separate processes see).
 *
 * Run: `npx tsx test/bench/scale-events.bench.ts` (the merger's `npm run bench:scale` calls
 * {@link measureCrossInstanceLatency}). Knobs: BENCH_SCALE_RUNS (300), BENCH_SCALE_CONCURRENCY
 * (10). Target: p99 ≤ 20 ms on loopback.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { WebSocket } from 'ws';
import { call, startTestService } from '../http/harness.js';
import { startTestRedis } from '../redis/redis-server.js';

export interface LatencyReport {
  runs: number;
  events: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function measureCrossInstanceLatency(
  options: { runs?: number; concurrency?: number; local?: boolean } = {},
): Promise<LatencyReport> {
  const runs = options.runs ?? 300;
  const concurrency = options.concurrency ?? 10;
  const redis = await startTestRedis();
  const env = { REDIS_URL: redis.url, AGENTIC_RATE_LIMIT_DEFAULT: '1000000/second' };
  const a = await startTestService({ env });
  // B executes nothing (role api): every run executes on A, whose runtime stamps the emit time.
  const b = await startTestService({ env: { ...env, AGENTIC_ROLE: 'api' }, root: a.root });
  const emitted = new Map<string, number>();
  const off = a.runtime.subscribe((event) => {
    emitted.set(`${event.run_id}:${event.seq}`, performance.now());
  });
  const latencies: number[] = [];
  // The baseline: the same clients on A itself (in-process hub, no Redis on the path).
  const watcher = options.local === true ? a : b;
  const wsBase = watcher.url.replace(/^http/, 'ws');
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < runs) {
        const runId = `bench-${next++}-${Date.now()}`;
        const ws = new WebSocket(`${wsBase}/ws/execution/${runId}`);
        const ended = new Promise<void>((resolve, reject) => {
          ws.on('message', (data: Buffer) => {
            const received = performance.now();
            const event = JSON.parse(data.toString('utf8')) as { seq: number; type: string };
            const sent = emitted.get(`${runId}:${event.seq}`);
            if (sent !== undefined) latencies.push(received - sent);
            emitted.delete(`${runId}:${event.seq}`);
            if (event.type === 'workflow_end') resolve();
          });
          ws.once('error', reject);
        });
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
        });
        // Measure live delivery only: the run starts once B follows its (empty) stream.
        while (options.local !== true && !b.scale!.remote.follows(runId)) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        const res = await call(a.url, 'POST', '/api/run', {
          workflow: 'test_deterministic',
          run_id: runId,
        });
        if (res.status !== 200) throw new Error(`POST /api/run: ${res.status} ${res.text}`);
        await ended;
        ws.close();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    off();
    await b.dispose();
    await a.dispose();
    await redis.stop();
  }
  latencies.sort((x, y) => x - y);
  return {
    runs,
    events: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? Number.NaN,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.env.BENCH_SCALE_RUNS ?? 300);
  const concurrency = Number(process.env.BENCH_SCALE_CONCURRENCY ?? 10);
  const local = process.env.BENCH_SCALE_LOCAL === '1';
  const report = await measureCrossInstanceLatency({ runs, concurrency, local });
  const fmt = (ms: number): string => `${ms.toFixed(2)} ms`;
  process.stdout.write(
    (local
      ? 'baseline, same-instance event latency (A → WebSocket client on A): '
      : 'cross-instance event latency (publish on A → WebSocket client on B, via Redis): ') +
      `${report.events} events of ${report.runs} runs, p50 ${fmt(report.p50Ms)}, ` +
      `p99 ${fmt(report.p99Ms)}, max ${fmt(report.maxMs)} (target p99 ≤ 20 ms)\n`,
  );
}
