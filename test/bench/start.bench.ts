/**
 * `npm run bench:start`: how long the shipped `dist/` takes to start (issue 25), as a ratio to a
 * bare `node -e 0` measured in the same rounds, so the load of a shared machine cancels out.
 *
 * Cases: `agentic --version`, `agentic list`, `agentic validate test_deterministic`, `agentic
 * run test_deterministic --no-llm` (each until the process exits), and the service (`node
 * dist/src/main.js`, port 0, a temp runs directory) until `GET /api/health` answers 200; and two
 * reference rows, the third-party packages `run` and the service load, imported by a bare node
 * (the floor under our own code). A round
 * runs the bare start and every case once, in turn; BENCH_START_ROUNDS (10) rounds after one
 * unmeasured warm-up round. Reported per case: the median wall time, and the median over the
 * rounds of the case's time over the bare start's time of the same round, against the targets.
 * Fails (exit code ≠ 0) when a case exits non-zero or the service does not answer.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_START_ROUNDS ?? 10)) || 10);
const CLI = join(packageRoot, 'dist', 'src', 'cli.js');
const MAIN = join(packageRoot, 'dist', 'src', 'main.js');

interface Case {
  name: string;
  /** Highest median ratio to the bare start the issue asks for. */
  target?: number;
  /** Seconds from spawn to the end of the case. */
  time(runsDir: string): Promise<number>;
}

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Spawns `node args` and resolves with the seconds until it exits; rejects on a non-zero exit. */
function timedExit(args: string[], runsDir: string): Promise<number> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, args, {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', AGENTIC_RUNS_DIR: runsDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      const elapsed = seconds(start);
      if (code === 0) resolve(elapsed);
      else reject(new Error(`node ${args.join(' ')} exited with ${String(code)}: ${stderr}`));
    });
  });
}

/** Starts the service and resolves with the seconds until /api/health answers 200; stops it. */
async function serviceReady(runsDir: string): Promise<number> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, [MAIN], {
    cwd: packageRoot,
    env: {
      PATH: process.env.PATH ?? '',
      AGENTIC_PORT: '0',
      AGENTIC_RUNS_DIR: runsDir,
      AGENTIC_NO_LLM: '1',
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    // The listening record names the port; health is polled from then on.
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        for (const line of output.split('\n')) {
          if (!line.includes('agentic-runtime listening')) continue;
          const record = JSON.parse(line) as { url?: string };
          if (record.url !== undefined) resolve(record.url);
        }
      });
      setTimeout(
        () => reject(new Error(`the service did not listen in 60 s: ${output}`)),
        60_000,
      ).unref();
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`service exited with ${code}: ${output}`)));
    });
    for (;;) {
      const answer = await fetch(`${url}/api/health`).catch(() => undefined);
      await answer?.body?.cancel();
      if (answer?.status === 200) return seconds(start);
      if (seconds(start) > 60) throw new Error('the service did not answer /api/health in 60 s');
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const BARE: Case = { name: 'node -e 0', time: (dir) => timedExit(['-e', '0'], dir) };

/** `node` importing `packages` (and, with `worker`, starting and ending one worker thread). */
function floorArgs(packages: readonly string[], worker = false): string[] {
  const imports = `await Promise.all(${JSON.stringify(packages)}.map((p) => import(p)));`;
  const thread = worker
    ? "const { Worker } = await import('node:worker_threads');" +
      "await new Promise((r) => new Worker('0', { eval: true }).on('exit', r));"
    : '';
  return ['--input-type=module', '-e', imports + thread];
}

/**
 * Reference rows, not targets: what the third-party packages a case loads cost before any of our
 * code runs (the floor no reordering of our own modules can go below). `run` needs the engine
 * (xstate), the YAML parser, the logger and the CLI parser, and writes through a worker thread;
 * the service adds the HTTP stack.
 */
const RUN_PACKAGES = ['xstate', 'yaml', 'pino', 'commander', 'lru-cache'];
const SERVICE_PACKAGES = [
  'xstate',
  'yaml',
  'pino',
  'lru-cache',
  'koa',
  '@koa/router',
  'koa-body',
  'ws',
  'undici',
  '@opentelemetry/api',
];
const CASES: Case[] = [
  { name: 'agentic --version', target: 3, time: (dir) => timedExit([CLI, '--version'], dir) },
  { name: 'agentic list', target: 3, time: (dir) => timedExit([CLI, 'list'], dir) },
  {
    name: 'agentic validate test_deterministic',
    time: (dir) => timedExit([CLI, 'validate', 'test_deterministic'], dir),
  },
  {
    name: 'agentic run test_deterministic',
    target: 4,
    time: (dir) => timedExit([CLI, 'run', 'test_deterministic', '--no-llm'], dir),
  },
  { name: 'service ready (/api/health)', target: 5, time: serviceReady },
  {
    name: "floor: run's packages + a worker",
    time: (dir) => timedExit(floorArgs(RUN_PACKAGES, true), dir),
  },
  {
    name: "floor: the service's packages",
    time: (dir) => timedExit(floorArgs(SERVICE_PACKAGES), dir),
  },
];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const runsDir = await mkdtemp(join(tmpdir(), 'agentic-start-bench-'));
  const times = new Map<string, number[]>([
    [BARE.name, []],
    ...CASES.map((c) => [c.name, []] as [string, number[]]),
  ]);
  const ratios = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
  try {
    for (let round = -1; round < ROUNDS; round++) {
      const bare = await BARE.time(runsDir);
      const measured = CASES.map(() => 0);
      for (const [i, c] of CASES.entries()) measured[i] = await c.time(runsDir);
      if (round < 0) continue; // warm-up: the file cache, the first compile of each module
      times.get(BARE.name)!.push(bare);
      for (const [i, c] of CASES.entries()) {
        times.get(c.name)!.push(measured[i]!);
        ratios.get(c.name)!.push(measured[i]! / bare);
      }
    }
  } finally {
    await rm(runsDir, { recursive: true, force: true });
  }
  console.log(
    `start-up of dist/: median of ${ROUNDS} rounds; × bare = median of per-round ratios to node -e 0 (load average ${loadavg()[0]!.toFixed(2)})`,
  );
  console.log(
    `${'case'.padEnd(36)} ${'median s'.padStart(9)} ${'min s'.padStart(7)} ${'max s'.padStart(7)} ${'× bare'.padStart(7)}  target`,
  );
  for (const c of [BARE, ...CASES]) {
    const t = times.get(c.name)!;
    const ratio = ratios.get(c.name);
    const r = ratio === undefined ? 1 : median(ratio);
    const verdict =
      c.target === undefined ? '' : `≤ ${c.target}×  ${r <= c.target ? 'met' : 'MISSED'}`;
    console.log(
      `${c.name.padEnd(36)} ${median(t).toFixed(3).padStart(9)} ${Math.min(...t)
        .toFixed(3)
        .padStart(7)} ${Math.max(...t)
        .toFixed(3)
        .padStart(7)} ${r.toFixed(1).padStart(7)}  ${verdict}`,
    );
  }
}

await main();
