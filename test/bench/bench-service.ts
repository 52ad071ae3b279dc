/**
 * The service under test of the HTTP benchmarks (`bench:http`, `bench:overhead`): a child process
 * running test/bench/http-bench-server.ts, its environment, its workflows directory and how a run
 * is posted to it. Shared so both benches drive the same service the same way.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from 'undici';
import type { ChildMessage, CpuSample, ParentMessage } from './http-bench-server.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');

// CLOCK_MONOTONIC is one clock for every process on the machine; performance.timeOrigin is
// not exact enough to compare times taken in two processes.
export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

export interface ServiceEnvOptions {
  runsDir: string;
  workflowsDir: string;
  /** The engine adapter runs use. */
  adapter: string;
  metrics: boolean;
  /** When set, AGENTIC_TRACING=1 exporting OTLP/HTTP protobuf to this base URL. */
  otlpEndpoint?: string | undefined;
  /** Log at info as in production (to a stdout the bench discards); otherwise silent. */
  logging: boolean;
}

/** The service's environment: open mode, no LLM, limits high enough not to interfere. */
export function serviceEnv(options: ServiceEnvOptions): NodeJS.ProcessEnv {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    AGENTIC_HOST: '127.0.0.1',
    AGENTIC_PORT: '0',
    AGENTIC_RUNS_DIR: options.runsDir,
    AGENTIC_WORKFLOWS_DIR: options.workflowsDir,
    AGENTIC_RATE_LIMIT_DEFAULT: '1000000/second',
    // Runs end faster than they start, but their end records may queue: never refuse a bench run.
    AGENTIC_MAX_ACTIVE_RUNS: '1000000',
    AGENTIC_NO_LLM: '1',
    AGENTIC_DEFAULT_ADAPTER: options.adapter,
    AGENTIC_METRICS: options.metrics ? '1' : '0',
    AGENTIC_TRACING: options.otlpEndpoint === undefined ? '0' : '1',
    ...(options.otlpEndpoint === undefined
      ? {}
      : {
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_EXPORTER_OTLP_ENDPOINT: options.otlpEndpoint,
        }),
    LOG_LEVEL: options.logging ? 'info' : 'silent',
  };
  delete childEnv.AGENTIC_API_KEY;
  return childEnv;
}

/** A temp directory with the shipped workflows plus `extra` (file name → YAML). */
export async function benchWorkflowsDir(extra: Record<string, string> = {}): Promise<string> {
  const workflowsDir = await mkdtemp(join(tmpdir(), 'agentic-bench-workflows-'));
  const shipped = join(root, 'workflows');
  for (const name of await readdir(shipped)) {
    if (name.endsWith('.yaml')) await copyFile(join(shipped, name), join(workflowsDir, name));
  }
  for (const [name, yaml] of Object.entries(extra)) await writeFile(join(workflowsDir, name), yaml);
  return workflowsDir;
}

export async function postRun(pool: Pool, body: Record<string, unknown>): Promise<void> {
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

export interface BenchServiceOptions {
  env: NodeJS.ProcessEnv;
  /** When set, the service writes a V8 CPU profile (`.cpuprofile`) into this directory on exit. */
  cpuProfDir?: string | undefined;
  /** Discard the service's stdout (its logs); otherwise it is inherited. */
  discardStdout?: boolean;
  /** Named in errors (several services may run at once). */
  name?: string;
}

/**
 * The child process and its IPC reports. Once it has exited unasked, every pending and later
 * wait rejects, so a bench fails instead of waiting forever for a dead service.
 */
export class BenchService {
  readonly child: ChildProcess;
  readonly name: string;
  url = '';
  private readonly doneAt = new Map<string, { at: number; status: string }>();
  private readonly doneWaiters = new Map<
    string,
    { resolve: (done: { at: number; status: string }) => void; reject: (error: Error) => void }
  >();
  readonly events: { seq: number; at: number; eventType: string }[] = [];
  private rssWaiter: ((message: Extract<ChildMessage, { type: 'rss' }>) => void) | undefined;
  /** In request order: IPC messages arrive in the order they were sent. */
  private readonly cpuWaiters: { resolve: (s: CpuSample) => void; reject: (e: Error) => void }[] =
    [];
  private readonly readyWaiter: Promise<void>;
  private onReady: () => void = () => undefined;
  private stopping = false;
  /** Set when the child exited without being asked to stop. */
  private died: Error | undefined;

  constructor(options: BenchServiceOptions) {
    this.name = options.name ?? 'service';
    this.child = fork(join(here, 'http-bench-server.ts'), [], {
      env: options.env,
      execArgv: [
        '--import',
        'tsx',
        '--expose-gc',
        // The same young-generation size as `npm start` (see docs/benchmarks.md).
        '--max-semi-space-size=64',
        ...(options.cpuProfDir === undefined
          ? []
          : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`]),
      ],
      stdio: ['ignore', options.discardStdout === true ? 'ignore' : 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (message: ChildMessage) => this.onMessage(message));
    this.readyWaiter = new Promise((resolve, reject) => {
      this.onReady = resolve;
      this.child.once('exit', (code, signal) => {
        if (this.stopping) return;
        this.died = new Error(`${this.name} exited (code ${code}, signal ${signal})`);
        reject(this.died);
        for (const waiter of this.doneWaiters.values()) waiter.reject(this.died);
        this.doneWaiters.clear();
        for (const waiter of this.cpuWaiters.splice(0)) waiter.reject(this.died);
      });
    });
    // Observed here so an early exit is not an unhandled rejection before ready() is awaited.
    this.readyWaiter.catch(() => undefined);
  }

  /** Resolves once the service listens (`url` is set); rejects if it exits first. */
  ready(): Promise<void> {
    return this.readyWaiter;
  }

  private onMessage(message: ChildMessage): void {
    switch (message.type) {
      case 'ready':
        this.url = message.url;
        this.onReady();
        break;
      case 'done':
        for (const { runId, at, status } of message.runs) {
          const waiter = this.doneWaiters.get(runId);
          if (waiter !== undefined) {
            this.doneWaiters.delete(runId);
            waiter.resolve({ at, status });
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
        this.cpuWaiters.shift()?.resolve(message);
        break;
      default: {
        const exhaustive: never = message;
        throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  send(message: ParentMessage): void {
    if (this.died !== undefined) throw this.died;
    this.child.send(message);
  }

  /** Resolves with the time the run's final run file was written, and its status. */
  waitDone(runId: string): Promise<{ at: number; status: string }> {
    const early = this.doneAt.get(runId);
    if (early !== undefined) {
      this.doneAt.delete(runId);
      return Promise.resolve(early);
    }
    if (this.died !== undefined) return Promise.reject(this.died);
    return new Promise((resolve, reject) => this.doneWaiters.set(runId, { resolve, reject }));
  }

  /** The service's CPU time and finished runs, taken together (no GC forced). */
  cpu(): Promise<CpuSample> {
    if (this.died !== undefined) return Promise.reject(this.died);
    return new Promise((resolve, reject) => {
      this.cpuWaiters.push({ resolve, reject });
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
    this.stopping = true;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.send({ type: 'stop' });
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
  }
}

/** A figure with `digits` decimals and thousands separators; `n/a` when not a number. */
export const fmt = (value: number, digits = 1): string =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', {
        maximumFractionDigits: digits,
        minimumFractionDigits: digits,
      })
    : 'n/a';
