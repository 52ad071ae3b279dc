/**
 * `npx tsx test/bench/write-ab.bench.ts <other write-worker.mjs>`: the run-record write path of
 * this tree's write worker against another build's (e.g. main's `workers/write-worker.mjs` in a
 * copy), in short alternating slices in one process, so that a shared machine's load drifts
 * over both alike (whole-bench rounds a minute apart differed by up to 6× here). Each slice:
 * 10 runs at a time for BENCH_AB_SLICE_MS (1500), each writing its start record (deferred, as the
 * runtime does) and, once that is durable, its end record, through the process log
 * (AGENTIC_WRITE_SYNC=log), on ext4 (the OS temp directory) and tmpfs (/dev/shm). Prints the
 * median and range of runs/s and CPU per run (main thread and worker) of each, over
 * BENCH_AB_SLICES (12) slices per worker and file system. The main-thread side is this tree's
 * (it handles both workers' answers).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import { newOwnerId } from '../../src/files/process-token.js';
import { processLogPrefix } from '../../src/store/process-log.js';
import { WriteThread } from '../../src/store/write-thread.js';
import { fmt, now } from './bench-service.js';

const env = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const SLICE_MS = env('BENCH_AB_SLICE_MS', 1500);
const SLICES = env('BENCH_AB_SLICES', 12);
const CONCURRENCY = 10;
const RECORD = `${JSON.stringify({ run_id: 'x', status: 'running', steps: [], pad: 'p'.repeat(1400) }, null, 2)}\n`;

const other = process.argv[2];
if (other === undefined) throw new Error('usage: write-ab.bench.ts <other write-worker.mjs>');
const workers = [
  { label: 'other', path: resolve(other) },
  { label: 'this', path: join(packageRoot, 'workers', 'write-worker.mjs') },
];
const fileSystems = [
  { label: 'ext4', base: tmpdir() },
  { label: 'tmpfs', base: '/dev/shm' },
];

interface Slice {
  rate: number;
  cpu: number;
}

async function slice(workerPath: string, base: string): Promise<Slice> {
  const dir = await mkdtemp(join(base, 'agentic-bench-write-ab-'));
  const thread = new WriteThread({ workerPath });
  const log = processLogPrefix(dir, newOwnerId());
  try {
    await thread.write(join(dir, 'warm.json'), RECORD, { log });
    let next = 0;
    let done = 0;
    const cpu0 = process.cpuUsage();
    const start = now();
    const deadline = start + SLICE_MS;
    const worker = async (): Promise<void> => {
      while (now() < deadline) {
        const path = join(dir, `run-${next++}.json`);
        await thread.write(path, RECORD, { log, deferMs: 50 });
        await thread.write(path, RECORD.replace('running', 'success'), { log });
        done++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { rate: done / seconds, cpu: (cpu.user + cpu.system) / done };
  } finally {
    await thread.checkpoint();
    await thread.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const results = new Map<string, Slice[]>();
for (let i = 0; i < SLICES; i++) {
  for (const fs of fileSystems) {
    // Which worker goes first alternates too.
    for (const w of i % 2 === 0 ? workers : [...workers].reverse()) {
      const key = `${fs.label} ${w.label}`;
      results.set(key, [...(results.get(key) ?? []), await slice(w.path, fs.base)]);
    }
  }
}
const stats = (values: number[]): string => {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${fmt(median, 0)} (${fmt(sorted[0]!, 0)}–${fmt(sorted.at(-1)!, 0)})`;
};
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `${SLICES} alternating slices of ${SLICE_MS} ms each, c=${CONCURRENCY}; median (range):`,
);
for (const [key, list] of results) {
  console.log(
    `| ${key.padEnd(11)} | ${stats(list.map((s) => s.rate)).padStart(22)} runs/s | ${stats(list.map((s) => s.cpu)).padStart(22)} µs CPU/run |`,
  );
}
// Paired: each slice of this worker against the other's slice next to it.
for (const fs of fileSystems) {
  const mine = results.get(`${fs.label} this`)!;
  const theirs = results.get(`${fs.label} other`)!;
  const ratios = mine.map((s, i) => s.rate / theirs[i]!.rate);
  console.log(
    `${fs.label}: this / other runs/s, paired slices: median ${fmt(median(ratios), 2)}× (faster in ${ratios.filter((r) => r > 1).length} of ${ratios.length})`,
  );
}
const rate = (key: string): number => median(results.get(key)!.map((s) => s.rate));
for (const w of workers) {
  console.log(
    `${w.label}: ext4 / tmpfs ${fmt((rate(`ext4 ${w.label}`) / rate(`tmpfs ${w.label}`)) * 100, 0)} %`,
  );
}
