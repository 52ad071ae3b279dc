/**
 * `GET /api/health` (liveness, public) and `GET /api/health/ready` (readiness: the runs
 * directory is writable, the workflows directory readable, the replay store answers).
 */
import type Router from '@koa/router';
import { constants } from 'node:fs';
import { access, readdir, stat } from 'node:fs/promises';
import type { Config } from '../../config/index.js';
import { errorMessage } from '../../errors.js';
import type { EventHub } from '../../events/hub.js';
import type { HealthResponse } from '../../generated/api/health-response.js';
import type { ReadinessResponse } from '../../generated/api/readiness-response.js';

export interface HealthRouteDeps {
  config: Pick<Config, 'runsDir' | 'workflowsDir'>;
  hub: Pick<EventHub, 'stats'>;
  version: string;
}

type Check = { ok: boolean; detail?: string };

async function probe(run: () => unknown): Promise<Check> {
  try {
    await run();
    return { ok: true };
  } catch (error) {
    return { ok: false, detail: errorMessage(error) };
  }
}

export function registerHealthRoutes(router: Router, deps: HealthRouteDeps): void {
  const health: HealthResponse = { status: 'ok', version: deps.version };
  router.get('/api/health', (ctx) => {
    ctx.body = health;
  });
  router.get('/api/health/ready', async (ctx) => {
    const checks: Record<string, Check> = {
      runs_dir: await probe(async () => {
        if (!(await stat(deps.config.runsDir)).isDirectory()) throw new Error('not a directory');
        await access(deps.config.runsDir, constants.W_OK | constants.X_OK);
      }),
      workflows_dir: await probe(() => readdir(deps.config.workflowsDir)),
      replay_store: await probe(() => deps.hub.stats()),
    };
    const failing = Object.entries(checks).filter(([, check]) => !check.ok);
    if (failing.length > 0) {
      ctx.status = 503;
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
