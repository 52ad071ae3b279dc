/**
 * `npx tsx test/bench/write-path.bench.ts`: the run-record write path alone (no HTTP, no engine),
 * as the runtime drives it: 10 runs at a time, each writing its start record and, once that is
 * durable, its end record (a record of ~1.5 KB, as `test_deterministic`'s). Per mode of
 * AGENTIC_WRITE_SYNC (`log`: the process log with group commit and the deferred first-record
 * file; `file`: an fsync per file, the path before the log; `off`), on ext4 (the OS temp
 * directory) and tmpfs (/dev/shm), in alternating rounds: runs/s and the process's CPU per run
 * (main thread and write worker). Knobs: BENCH_WRITE_RUNS (3000 per round), BENCH_WRITE_ROUNDS
 * (3).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newOwnerId } from '../../src/files/process-token.js';
import { processLogPrefix } from '../../src/store/process-log.js';
import { WriteThread, type WriteOptions } from '../../src/store/write-thread.js';
import { fmt, now } from './bench-service.js';

const env = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const RUNS = env('BENCH_WRITE_RUNS', 3000);
const ROUNDS = env('BENCH_WRITE_ROUNDS', 3);
const CONCURRENCY = 10;
const RECORD = `${JSON.stringify({ run_id: 'x', status: 'running', steps: [], pad: 'p'.repeat(1400) }, null, 2)}\n`;

type Mode = 'log' | 'file' | 'off';

async function measure(base: string, mode: Mode): Promise<{ rate: number; cpu: number }> {
  const dir = await mkdtemp(join(base, 'agentic-bench-write-'));
  const thread = new WriteThread();
  const options: WriteOptions =
    mode === 'log'
      ? { log: processLogPrefix(dir, newOwnerId()) }
      : mode === 'off'
        ? { sync: false }
        : {};
  try {
    // Warm-up: the worker started, the directory's first files made.
    await thread.write(join(dir, 'warm.json'), RECORD, options);
    let next = 0;
    const cpu0 = process.cpuUsage();
    const start = now();
    const worker = async (): Promise<void> => {
      while (next < RUNS) {
        const path = join(dir, `run-${next++}.json`);
        await thread.write(path, RECORD, { ...options, deferMs: mode === 'log' ? 50 : undefined });
        await thread.write(path, RECORD.replace('running', 'success'), options);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { rate: RUNS / seconds, cpu: (cpu.user + cpu.system) / RUNS };
  } finally {
    await thread.checkpoint();
    await thread.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const cases: { label: string; base: string; mode: Mode }[] = [
  { label: 'ext4 log', base: tmpdir(), mode: 'log' },
  { label: 'ext4 file', base: tmpdir(), mode: 'file' },
  { label: 'ext4 off', base: tmpdir(), mode: 'off' },
  { label: 'tmpfs log', base: '/dev/shm', mode: 'log' },
  { label: 'tmpfs file', base: '/dev/shm', mode: 'file' },
];
const results = new Map<string, { rate: number; cpu: number }[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const { label, base, mode } of cases) {
    const result = await measure(base, mode);
    results.set(label, [...(results.get(label) ?? []), result]);
    console.log(
      `round ${round + 1} ${label.padEnd(10)} ${fmt(result.rate, 0).padStart(7)} runs/s ${fmt(result.cpu, 0).padStart(6)} µs CPU/run`,
    );
  }
}
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rate = (label: string): number => median(results.get(label)!.map((r) => r.rate));
const cpu = (label: string): number => median(results.get(label)!.map((r) => r.cpu));
console.log('\nmedians:');
for (const { label } of cases) {
  console.log(
    `| ${label.padEnd(10)} | ${fmt(rate(label), 0).padStart(7)} runs/s | ${fmt(cpu(label), 0).padStart(6)} µs CPU/run |`,
  );
}
console.log(
  `ext4 log / tmpfs log: ${fmt((rate('ext4 log') / rate('tmpfs log')) * 100, 0)} %; ext4 log / ext4 file: ${fmt(rate('ext4 log') / rate('ext4 file'), 2)}×; CPU/run ext4 log / ext4 file: ${fmt(cpu('ext4 log') / cpu('ext4 file'), 2)}×`,
);
