/**
 * `GET /api/health` (liveness, public) and `GET /api/health/ready` (readiness). Readiness checks
 * what a run needs, for real: the runs directory is a directory (`runs_dir`), its file system
 * has `AGENTIC_RUNS_MIN_FREE_MB` free (`runs_dir_space`, statfs), a small temp file can be
 * written, fsynced and removed there (`runs_dir_write`), no run record is waiting on a failing
 * write and the write queue is not full (`run_writes`); the run history index is loaded
 * (`run_history`); the workflows directory is readable, the replay store answers. A worker's
 * endpoint (worker-endpoint.ts) has neither history nor replay store: those two checks are left
 * out there.
 * `active_runs` reports how many runs are active of `AGENTIC_MAX_ACTIVE_RUNS` and never fails:
 * at the limit the service still serves streams, history and cancels of its runs (only new
 * runs get 429), so it must stay in rotation.
 * Details name the runs directory as configured relative to the working directory (or by its
 * base name), never by absolute path: readiness bodies reach load balancers and dashboards.
 */
import type Router from '@koa/router';
import { randomBytes } from 'node:crypto';
import { open, readdir, stat, statfs, unlink } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import type { Config } from '../../config/index.js';
import type { Runtime } from '../../engine/types.js';
import { errorMessage } from '../../errors.js';
import type { EventHub } from '../../events/hub.js';
import type { HealthResponse } from '../../generated/api/health-response.js';
import type { ReadinessResponse } from '../../generated/api/readiness-response.js';
import type { HistoryIndex } from '../../store/history.js';

export interface HealthRouteDeps {
  config: Pick<Config, 'runsDir' | 'workflowsDir' | 'runsMinFreeBytes' | 'writeQueueMax'>;
  /**
   * How the runs directory is named in check details (never an absolute path).
   * @default {@link dirLabel} of the runs directory
   */
  runsDirLabel?: string;
  /** The replay store (`replay_store`). @default none: no such check (a worker serves no replay) */
  hub?: Pick<EventHub, 'stats'>;
  runtime: Pick<Runtime, 'writes' | 'activeRuns' | 'options'>;
  /** The run history index (`run_history`). @default none: no such check (a worker keeps none) */
  history?: Pick<HistoryIndex, 'loaded' | 'runCount'>;
  version: string;
  /**
   * Checks of shared dependencies, by name (`redis`, `queue`): each rejects with a message safe
   * to show (it becomes the check's detail) when the dependency does not answer. @default none
   */
  dependencyChecks?: Readonly<Record<string, ReadinessCheck>>;
}

/** A readiness check of a dependency: resolves when it answers, rejects with a safe message. */
export type ReadinessCheck = () => Promise<void>;

type Check = { ok: boolean; detail?: string };

/** A check that failed, with a message safe to show (no paths). */
class CheckFailed extends Error {}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'EIO';
}

async function probe(run: () => unknown, describe: (code: string) => string): Promise<Check> {
  try {
    await run();
    return { ok: true };
  } catch (error) {
    return {
      ok: false,
      detail: error instanceof CheckFailed ? error.message : describe(codeOf(error)),
    };
  }
}

/** Writes, fsyncs and removes a small temp file in `dir` (what a run-file write does). */
async function writeProbe(dir: string): Promise<void> {
  const path = join(dir, `.ready-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(path, 'wx', 0o644);
  try {
    await handle.writeFile('ready\n');
    await handle.sync();
  } finally {
    await handle.close();
    await unlink(path);
  }
}

/** `dir` relative to `cwd` when inside it, else its base name: never an absolute path. */
export function dirLabel(dir: string, cwd: string): string {
  const rel = relative(cwd, dir);
  if (rel === '') return '.';
  return rel.startsWith('..') || isAbsolute(rel) ? basename(dir) : rel;
}

export function registerHealthRoutes(router: Router, deps: HealthRouteDeps): void {
  const { config, hub, history } = deps;
  const runsDirLabel = deps.runsDirLabel ?? dirLabel(config.runsDir, process.cwd());
  const runsDir = `runs directory '${runsDirLabel}'`;
  const health: HealthResponse = { status: 'ok', version: deps.version };
  router.get('/api/health', (ctx) => {
    ctx.body = health;
  });
  router.get('/api/health/ready', async (ctx) => {
    const checks: Record<string, Check> = {
      runs_dir: await probe(
        async () => {
          if (!(await stat(config.runsDir)).isDirectory()) {
            throw new CheckFailed(`${runsDir} is not a directory`);
          }
        },
        (code) => `${runsDir} is not accessible (${code})`,
      ),
      runs_dir_space: await probe(
        async () => {
          const fs = await statfs(config.runsDir);
          const free = fs.bavail * fs.bsize;
          if (free < config.runsMinFreeBytes) {
            const mib = (bytes: number): number => Math.floor(bytes / 1024 / 1024);
            throw new CheckFailed(
              `${runsDir} has ${mib(free)} MiB free, below the ${mib(config.runsMinFreeBytes)} MiB minimum`,
            );
          }
        },
        (code) => `free space of the ${runsDir} unknown (${code})`,
      ),
      runs_dir_write: await probe(
        () => writeProbe(config.runsDir),
        (code) => `cannot write to the ${runsDir} (${code})`,
      ),
      run_writes: await probe(
        () => {
          const { failing, lastError, pending } = deps.runtime.writes();
          if (failing > 0) {
            throw new CheckFailed(
              `${failing} run record(s) not yet written to the ${runsDir} (${lastError ?? 'EIO'}); retrying`,
            );
          }
          if (pending >= config.writeQueueMax) {
            throw new CheckFailed(`the run-file write queue is full (${pending} records waiting)`);
          }
        },
        (code) => `run writes unknown (${code})`,
      ),
      ...(history === undefined
        ? {}
        : {
            run_history: await probe(
              () => {
                if (!history.loaded) {
                  throw new CheckFailed(
                    `the run history is loading (${history.runCount} runs indexed so far)`,
                  );
                }
              },
              (code) => `run history unknown (${code})`,
            ),
          }),
      active_runs: {
        ok: true,
        detail: `${deps.runtime.activeRuns().length} of at most ${deps.runtime.options.maxActiveRuns} runs active`,
      },
      workflows_dir: await probe(
        () => readdir(config.workflowsDir),
        (code) => `workflows directory not readable (${code})`,
      ),
      ...(hub === undefined
        ? {}
        : {
            replay_store: await probe(
              () => hub.stats(),
              (code) => `replay store unavailable (${code})`,
            ),
          }),
    };
    for (const [name, check] of Object.entries(deps.dependencyChecks ?? {})) {
      checks[name] = await check().then(
        (): Check => ({ ok: true }),
        (error: unknown): Check => ({ ok: false, detail: errorMessage(error) }),
      );
    }
    const failing = Object.entries(checks).filter(([, check]) => !check.ok);
    if (failing.length > 0) {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = {
        detail: `not ready: ${failing.map(([name, c]) => `${name} (${c.detail ?? 'failed'})`).join(', ')}`,
        checks,
      };
      return;
    }
    const body: ReadinessResponse = { status: 'ready', checks };
    ctx.body = body;
  });
}
