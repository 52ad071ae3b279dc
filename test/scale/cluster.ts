/**
 * A scale-out deployment of real processes for tests and benchmarks: api instances
 * (`AGENTIC_ROLE=api`, each on its own port) and workers (`AGENTIC_ROLE=worker`) of the service
 * entry point (src/main.ts through tsx), sharing one Redis and one runs directory. Each process
 * is watched through its JSON log; `stop` ends them all (SIGKILL for those still running).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';

// Resolved here: children may run in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;
const MAIN = join(packageRoot, 'src', 'main.ts');
/** What `npm start` runs: the compiled entry point (benchmarks measure what ships). */
const DIST_MAIN = join(packageRoot, 'dist', 'src', 'main.js');

/** `src`: the TypeScript sources through tsx (tests); `dist`: the build `npm start` runs. */
export type ClusterEntry = 'src' | 'dist';

/** One service process of the cluster. */
export interface ClusterProcess {
  role: 'api' | 'worker' | 'all';
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** JSON log lines so far, parsed (non-JSON lines skipped). */
  logs(): Record<string, unknown>[];
  /** Settles with the exit code (null after a signal). */
  exit: Promise<number | null>;
  /**
   * `http://127.0.0.1:<port>` of an api instance, or of a worker's endpoint (metrics, health;
   * each worker of the cluster has one on a free port); empty for a worker that listens on none.
   */
  url: string;
}

export interface ClusterOptions {
  redisUrl: string;
  runsDir: string;
  workflowsDir: string;
  apis?: number;
  workers?: number;
  /** Extra variables for every process (e.g. AGENTIC_WORKER_LOCK_SECONDS). */
  env?: Record<string, string>;
  /** @default 'src' */
  entry?: ClusterEntry;
}

export interface Cluster {
  apis: ClusterProcess[];
  workers: ClusterProcess[];
  /** Starts one more process of `role` (with `env` on top of the cluster's). */
  add(role: 'api' | 'worker' | 'all', env?: Record<string, string>): Promise<ClusterProcess>;
  /** SIGKILLs what still runs and waits for every exit. */
  stop(): Promise<void>;
}

function parseLines(text: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by the end of the output so far
    }
  }
  return lines;
}

/** Spawns one service process and resolves once it serves (api: listening; worker: started). */
export function spawnService(
  role: 'api' | 'worker' | 'all',
  env: Record<string, string>,
  entry: ClusterEntry = 'src',
): Promise<ClusterProcess> {
  const args = entry === 'dist' ? ['--max-semi-space-size=64', DIST_MAIN] : ['--import', TSX, MAIN];
  const child = spawn(process.execPath, args, {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', AGENTIC_ROLE: role, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ready = role === 'worker' ? 'agentic-runtime worker started' : 'agentic-runtime listening';
  return new Promise((resolve, reject) => {
    const onData = (): void => {
      const line = parseLines(output).find((entry) => entry.msg === ready);
      if (line === undefined) return;
      child.stdout?.off('data', onData);
      resolve({
        role,
        child,
        output: () => output,
        logs: () => parseLines(output),
        exit,
        url: typeof line.url === 'string' ? line.url : '',
      });
    };
    child.stdout?.on('data', onData);
    void exit.then((code) =>
      reject(new Error(`${role} exited with ${String(code)} before it was ready: ${output}`)),
    );
  });
}

/** Starts `apis` api instances and `workers` workers (defaults 1 and 2) on one Redis. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const base: Record<string, string> = {
    REDIS_URL: options.redisUrl,
    AGENTIC_HOST: '127.0.0.1',
    AGENTIC_PORT: '0',
    // Several workers on one machine: each endpoint on a free port (its start line names it).
    AGENTIC_WORKER_PORT: '0',
    AGENTIC_RUNS_DIR: options.runsDir,
    AGENTIC_WORKFLOWS_DIR: options.workflowsDir,
    AGENTIC_NO_LLM: '1',
    LOG_FORMAT: 'json',
    ...options.env,
  };
  const all: ClusterProcess[] = [];
  const add = async (
    role: 'api' | 'worker' | 'all',
    env: Record<string, string> = {},
  ): Promise<ClusterProcess> => {
    const started = await spawnService(role, { ...base, ...env }, options.entry);
    all.push(started);
    return started;
  };
  const cluster: Cluster = {
    apis: [],
    workers: [],
    add,
    async stop() {
      for (const { child } of all) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      await Promise.all(all.map((entry) => entry.exit));
    },
  };
  try {
    const apis = Array.from({ length: options.apis ?? 1 }, () => add('api'));
    const workers = Array.from({ length: options.workers ?? 2 }, () => add('worker'));
    cluster.apis.push(...(await Promise.all(apis)));
    cluster.workers.push(...(await Promise.all(workers)));
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
