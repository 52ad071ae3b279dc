/**
 * The chaos campaign of issue 26 against the real service process (dist/): runs of a 6-step
 * workflow whose steps leave side effects in a log, the process killed with SIGKILL at random
 * moments and started again each time, until every run has ended. Then, from the outside:
 *
 * - every run ends `success` (GET /api/runs/{id});
 * - every step of every run ran to its end (its `done` line is in the side-effect log);
 * - no step ran again once it had finished: an execution that ended (its `done` line) is
 *   followed by another only when a kill came within `windowMs` after its end (the journal's group
 *   commit: a step's end reaches the disk at most that long after it happened, so a kill in that
 *   window loses it and the step runs again, as docs/durable-runs.md says).
 *
 * With `signal: 'SIGTERM'` it is a rolling restart instead (a deploy: the process stops, the
 * next one goes on).
 *
 * `npm run chaos` runs the full campaign (100 runs, 20 kills); test/e2e/chaos.test.ts a small
 * one, so `npm test` stays short.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import { spawnService, until, type ServiceProcess } from '../e2e/service-process.js';
import { startTestRedis } from '../redis/redis-server.js';
import { spawnService as spawnClusterService, type ClusterProcess } from '../scale/cluster.js';

export interface CampaignOptions {
  runs: number;
  kills: number;
  /** Random pause before each kill, ms: [min, max). */
  killAfterMs: readonly [number, number];
  /** How the process is stopped: SIGKILL (a crash) or SIGTERM (a deploy). @default SIGKILL */
  signal?: 'SIGKILL' | 'SIGTERM';
  /** Most a step's end may precede the kill that makes it run again (the commit window). */
  windowMs: number;
  /**
   * Runs submitted in `kills + 1` waves, one before the first kill and one after each restart,
   * so runs are in flight at every kill (runs submitted at once all end within a few kills).
   * @default false: all at the start
   */
  staggered?: boolean;
  /** Length of each step, ms: [min, max), drawn once per step of the workflow. @default [50, 300] */
  stepMs?: readonly [number, number];
  /** Seed of the pseudo-random pauses and step lengths (repeatable campaigns). */
  seed: number;
  /** Extra service environment. */
  env?: Record<string, string>;
  /** Progress lines (the CLI prints them; the test keeps them for its failure message). */
  log?: (line: string) => void;
  /**
   * `single`: one service process, killed and started again. `workers`: an api instance and two
   * workers on a real redis-server sharing the runs directory; a random worker is killed each
   * time and started again (the api instance lives on). @default 'single'
   */
  mode?: 'single' | 'workers';
}

export interface CampaignResult {
  runs: number;
  kills: number;
  /** Run id → final status. */
  statuses: Map<string, string>;
  /** Step executions in all (the workflow has 6 steps a run). */
  executions: number;
  /** Steps that ran more than once (each allowed by a kill, or listed in `violations`). */
  repeated: number;
  /** What broke the promise, in words (empty when it held). */
  violations: string[];
  seconds: number;
}

/** The side-effect agent: `start`/`done` lines with the time, the run and the step. */
const AGENTS = `import { appendFileSync } from 'node:fs';
const LOG = process.env.CHAOS_SIDE_EFFECTS;
const pause = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('aborted')); }, { once: true });
});
export default {
  side_effect: async ({ input, runId, step, signal }) => {
    appendFileSync(LOG, \`start \${Date.now()} \${runId} \${step.name}\\n\`);
    await pause(Number(input.ms), signal);
    appendFileSync(LOG, \`done \${Date.now()} \${runId} \${step.name}\\n\`);
    return { output: { step: step.name }, modelUsed: null, tokensUsed: null };
  },
};
`;

/** Six steps: a chain with a fan-out and a join (a → b, c → d → e → f). */
function workflow(ms: (step: string) => number): string {
  const step = (name: string, after: string[]): string =>
    `  - { name: ${name}, agent: side_effect, ${after.length > 0 ? `depends_on: [${after.join(', ')}], ` : ''}inputs: { ms: ${ms(name)} } }\n`;
  return (
    'name: chaos\nsteps:\n' +
    step('a', []) +
    step('b', ['a']) +
    step('c', ['a']) +
    step('d', ['b', 'c']) +
    step('e', ['d']) +
    step('f', ['e'])
  );
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FINAL = new Set(['success', 'failed', 'cancelled', 'interrupted']);

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const log = options.log ?? (() => undefined);
  const next = random(options.seed);
  const began = Date.now();
  const root = await mkdtemp(join(tmpdir(), 'agentic-chaos-'));
  const sideEffects = join(root, 'side-effects.log');
  await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
  await writeFile(join(root, 'agents.mjs'), AGENTS);
  await writeFile(
    join(root, 'workflows', 'chaos.yaml'),
    workflow(() => {
      const [min, max] = options.stepMs ?? [50, 300];
      return min + Math.floor(next() * (max - min));
    }),
  );
  await appendFile(sideEffects, '');
  const env = {
    AGENTIC_PORT: '0',
    AGENTIC_RUNS_DIR: join(root, 'runs'),
    AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
    AGENTIC_AGENTS_MODULE: join(root, 'agents.mjs'),
    AGENTIC_NO_LLM: '1',
    AGENTIC_RATE_LIMIT_DEFAULT: '100000/minute',
    AGENTIC_MAX_ACTIVE_RUNS: '10000',
    LOG_FORMAT: 'json',
    CHAOS_SIDE_EFFECTS: sideEffects,
    ...options.env,
  };
  if (options.mode === 'workers')
    return workersCampaign(options, { root, sideEffects, env, next, began });
  let service: ServiceProcess | undefined;
  const killTimes: number[] = [];
  const runIds = Array.from({ length: options.runs }, (_, i) => `chaos-${options.seed}-${i}`);
  try {
    service = spawnService(env);
    let url = await service.listening;
    await accept(url, wave(options, runIds, 0));
    log(`${options.runs} runs${options.staggered === true ? ' in waves' : ''} accepted`);
    for (let kill = 1; kill <= options.kills; kill++) {
      const [min, max] = options.killAfterMs;
      await new Promise((resolve) => setTimeout(resolve, min + next() * (max - min)));
      killTimes.push(Date.now());
      service.child.kill(options.signal ?? 'SIGKILL');
      await service.exit;
      service = spawnService(env);
      url = await service.listening;
      await accept(url, wave(options, runIds, kill));
      log(`kill ${kill}/${options.kills}: restarted`);
    }
    const statuses = await waitForEnds(url, runIds);
    log('every run ended');
    return await outcome(options, statuses, sideEffects, runIds, killTimes, began);
  } finally {
    if (service !== undefined && service.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await service.exit;
    }
    if (process.env.CHAOS_KEEP === undefined) await rm(root, { recursive: true, force: true });
    else log(`kept ${root}`);
  }
}

/** The workers mode (see `CampaignOptions.mode`). */
async function workersCampaign(
  options: CampaignOptions,
  at: {
    root: string;
    sideEffects: string;
    env: Record<string, string>;
    next: () => number;
    began: number;
  },
): Promise<CampaignResult> {
  const log = options.log ?? (() => undefined);
  const { root, sideEffects, next, began } = at;
  const killTimes: number[] = [];
  const runIds = Array.from({ length: options.runs }, (_, i) => `chaos-w${options.seed}-${i}`);
  const redis = await startTestRedis();
  const env: Record<string, string> = {
    ...at.env,
    REDIS_URL: redis.url,
    AGENTIC_HOST: '127.0.0.1',
    AGENTIC_WORKER_CONCURRENCY: String(Math.max(10, options.runs)),
    AGENTIC_WORKER_LOCK_SECONDS: '2',
    ...options.env,
  };
  const processes: ClusterProcess[] = [];
  const start = async (role: 'api' | 'worker'): Promise<ClusterProcess> => {
    const started = await spawnClusterService(role, env, 'dist');
    processes.push(started);
    return started;
  };
  try {
    const api = await start('api');
    const workers = await Promise.all([start('worker'), start('worker')]);
    await accept(api.url, wave(options, runIds, 0));
    log(`${options.runs} runs accepted by the api instance, 2 workers`);
    for (let kill = 1; kill <= options.kills; kill++) {
      const [min, max] = options.killAfterMs;
      await new Promise((resolve) => setTimeout(resolve, min + next() * (max - min)));
      const index = next() < 0.5 ? 0 : 1;
      const victim = workers[index];
      killTimes.push(Date.now());
      victim.child.kill('SIGKILL');
      await victim.exit;
      workers[index] = await start('worker');
      await accept(api.url, wave(options, runIds, kill));
      log(`kill ${kill}/${options.kills}: worker ${index + 1} killed and started again`);
    }
    const statuses = await waitForEnds(api.url, runIds);
    log('every run ended');
    return await outcome(options, statuses, sideEffects, runIds, killTimes, began);
  } finally {
    for (const { child } of processes) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await Promise.all(processes.map((p) => p.exit));
    await redis.stop();
    if (process.env.CHAOS_KEEP === undefined) await rm(root, { recursive: true, force: true });
    else log(`kept ${root}`);
  }
}

/** POSTs every run to the service at `url`; throws when one is refused. */
/** The runs submitted before kill `index + 1` (all of them at once unless staggered). */
function wave(
  options: CampaignOptions,
  runIds: readonly string[],
  index: number,
): readonly string[] {
  if (options.staggered !== true) return index === 0 ? runIds : [];
  const waves = options.kills + 1;
  const size = Math.ceil(runIds.length / waves);
  return runIds.slice(index * size, (index + 1) * size);
}

async function accept(url: string, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  const accepted = await Promise.all(
    runIds.map(async (id) => {
      const answer = await fetch(`${url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'chaos', run_id: id }),
      });
      return { id, status: answer.status, body: await answer.text() };
    }),
  );
  const refused = accepted.filter((a) => a.status !== 200);
  if (refused.length > 0) {
    throw new Error(
      `runs refused: ${refused
        .slice(0, 5)
        .map((r) => `${r.id} ${r.status} ${r.body}`)
        .join('; ')}`,
    );
  }
}

/** Polls GET /api/runs/{id} until every run has a final status; returns them. */
async function waitForEnds(
  current: string,
  runIds: readonly string[],
): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  await until(
    'every run to end',
    async () => {
      for (const id of runIds) {
        if (FINAL.has(statuses.get(id) ?? '')) continue;
        const answer = await fetch(`${current}/api/runs/${id}`);
        const body = (await answer.json()) as { status?: string };
        if (answer.status === 200 && body.status !== undefined) statuses.set(id, body.status);
      }
      return runIds.every((id) => FINAL.has(statuses.get(id) ?? ''));
    },
    Math.max(120_000, runIds.length * 1_000),
  );
  return statuses;
}

/** Checks the statuses and the side-effect log (see the module comment). */
async function outcome(
  options: CampaignOptions,
  statuses: Map<string, string>,
  sideEffects: string,
  runIds: readonly string[],
  killTimes: readonly number[],
  began: number,
): Promise<CampaignResult> {
  const violations: string[] = [];
  for (const [id, status] of statuses) {
    if (status !== 'success') violations.push(`run ${id} ended ${status}`);
  }
  const { executions, repeated, problems } = checkSideEffects(
    await readFile(sideEffects, 'utf8'),
    runIds,
    killTimes,
    options.windowMs,
  );
  violations.push(...problems);
  return {
    runs: options.runs,
    kills: options.kills,
    statuses,
    executions,
    repeated,
    violations,
    seconds: (Date.now() - began) / 1000,
  };
}

interface Execution {
  start: number;
  done?: number;
}

/** Checks the side-effect log against the promise (see the module comment). */
export function checkSideEffects(
  text: string,
  runIds: readonly string[],
  killTimes: readonly number[],
  windowMs: number,
): { executions: number; repeated: number; problems: string[] } {
  const byStep = new Map<string, Execution[]>();
  for (const line of text.split('\n')) {
    const [kind, time, runId, step] = line.split(' ');
    if (kind === undefined || runId === undefined || step === undefined) continue;
    const key = `${runId} ${step}`;
    const list = byStep.get(key) ?? [];
    byStep.set(key, list);
    if (kind === 'start') list.push({ start: Number(time) });
    else if (kind === 'done' && list.length > 0) list[list.length - 1]!.done = Number(time);
  }
  const problems: string[] = [];
  let executions = 0;
  let repeated = 0;
  for (const runId of runIds) {
    for (const step of ['a', 'b', 'c', 'd', 'e', 'f']) {
      const list = byStep.get(`${runId} ${step}`) ?? [];
      executions += list.length;
      if (list.length > 1) repeated++;
      if (list.at(-1)?.done === undefined) {
        problems.push(`step ${step} of ${runId} never finished`);
        continue;
      }
      for (const [i, run] of list.slice(0, -1).entries()) {
        // An execution that never finished was interrupted: running it again is the resume.
        if (run.done === undefined) continue;
        const done = run.done;
        if (!killTimes.some((k) => k >= done && k - done <= windowMs)) {
          problems.push(
            `step ${step} of ${runId} ran again after execution ${i + 1} finished ` +
              `(no kill within ${windowMs} ms after its end)`,
          );
        }
      }
    }
  }
  return { executions, repeated, problems };
}
