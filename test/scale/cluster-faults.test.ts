/**
 * Faults and shared limits of a deployment of real processes (2 api instances + 2 workers on
 * one redis-server): Redis stopped and restarted while both api instances take runs, and the
 * rate limit and auth lockout counted across both api processes.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { startCluster, type Cluster, type ClusterProcess } from './cluster.js';

const BRIEF = `name: brief
steps:
  - { name: first, agent: tier0_echo, inputs: { text: one } }
  - { name: wait, agent: tier0_sleep, depends_on: [first], inputs: { ms: 300 } }
`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, body: { text } };
  }
}

const postRun = (api: ClusterProcess, runId: string): Promise<Answer> =>
  request(`${api.url}/api/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'brief', run_id: runId }),
  });

/** Polls `check` every 50 ms until it holds, failing after `ms`. */
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('scale-out faults: 2 api instances, 2 workers (real processes)', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let root: string;
  let runsDir: string;
  let cluster: Cluster | undefined;

  beforeEach(async () => {
    // Queued runs live in Redis: a deployment's Redis keeps an append-only file (docs/scale-out.md).
    redis = await startTestRedis({ persistent: true });
    root = await mkdtemp(join(tmpdir(), 'agentic-scale-faults-'));
    runsDir = join(root, 'runs');
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await writeFile(join(root, 'workflows', 'brief.yaml'), BRIEF);
  });
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
    await redis.destroy();
    await rm(root, { recursive: true, force: true });
  });

  async function start(apis: number, workers: number, env: Record<string, string>) {
    cluster = await startCluster({
      redisUrl: redis.url,
      runsDir,
      workflowsDir: join(root, 'workflows'),
      apis,
      workers,
      env: { LOG_LEVEL: 'debug', ...env },
    });
    return cluster;
  }

  /** The run files of the runs directory by run id (several files of one id all kept). */
  async function runFiles(): Promise<Map<string, RunRecord[]>> {
    const names = (await readdir(runsDir)).filter((n) => /^[0-9].*\.json$/.test(n));
    const byRun = new Map<string, RunRecord[]>();
    for (const name of names) {
      const record = JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
      byRun.set(record.run_id, [...(byRun.get(record.run_id) ?? []), record]);
    }
    return byRun;
  }

  it('Redis stopped and restarted mid-load: refusals with 503 while away, every accepted run persisted once, then resumes', async () => {
    const { apis, workers } = await start(2, 2, { AGENTIC_RATE_LIMIT_DEFAULT: '100000/second' });
    const accepted: string[] = [];
    const refusals: Answer[] = [];
    const refusedIds: string[] = [];
    const unexpected: Answer[] = [];
    let phase: 'before' | 'away' | 'back' = 'before';
    let acceptedAfterReturn = 0;
    let stopLoad = false;
    let next = 0;
    // Four clients alternate between the two api instances until told to stop.
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        while (!stopLoad) {
          const runId = `fault-${lane}-${next++}`;
          const answer = await postRun(apis[next % 2]!, runId).catch((error: unknown) => ({
            status: 0,
            body: { error: String(error) },
          }));
          if (answer.status === 200) {
            accepted.push(runId);
            if (phase === 'back') acceptedAfterReturn += 1;
          } else if (answer.status === 503) {
            refusals.push(answer);
            refusedIds.push(runId);
            await new Promise((resolve) => setTimeout(resolve, 20));
          } else unexpected.push(answer);
        }
      }),
    );

    await until('40 runs accepted', () => accepted.length >= 40);
    await redis.stop();
    phase = 'away';
    for (const api of apis) {
      await until('readiness 503 naming Redis', async () => {
        const ready = await request(`${api.url}/api/health/ready`);
        return ready.status === 503 && JSON.stringify(ready.body).toLowerCase().includes('redis');
      });
    }
    await until('new runs refused with 503', () => refusals.length >= 4);
    await redis.restart();
    for (const api of apis) {
      await until('readiness back', async () => {
        return (await request(`${api.url}/api/health/ready`)).status === 200;
      });
    }
    phase = 'back';
    await until('40 more runs accepted after Redis returned', () => acceptedAfterReturn >= 40);
    stopLoad = true;
    await load;

    expect(unexpected, JSON.stringify(unexpected.slice(0, 3))).to.deep.equal([]);
    for (const refusal of refusals) {
      expect(refusal.body.detail, JSON.stringify(refusal.body)).to.be.a('string').and.not.empty;
    }
    await until(
      'every accepted run persisted with a final status',
      async () => {
        const files = await runFiles();
        return accepted.every((runId) => {
          const records = files.get(runId);
          return records !== undefined && records.every((r) => r.status !== 'running');
        });
      },
      60_000,
    ).catch(async (error: unknown) => {
      const files = await runFiles();
      const missing = accepted.filter((runId) => !files.has(runId));
      const running = accepted.filter((runId) =>
        files.get(runId)?.some((r) => r.status === 'running'),
      );
      const log = (runId: string) =>
        [...apis, ...workers].flatMap((p) =>
          p
            .logs()
            .filter((line) => JSON.stringify(line).includes(runId))
            .map((line) => `${p.role}: ${JSON.stringify(line)}`),
        );
      console.error(
        'DIAG missing',
        missing.length,
        missing.slice(0, 5),
        'running',
        running.length,
        running.slice(0, 5),
      );
      for (const runId of [...missing.slice(0, 2), ...running.slice(0, 2)])
        console.error(log(runId).join('\n'));
      throw error;
    });
    const files = await runFiles();
    for (const runId of accepted) {
      const records = files.get(runId) ?? [];
      expect(records, runId).to.have.length(1);
      expect(records[0]!.status, `${runId}: ${JSON.stringify(records[0]!.error)}`).to.equal(
        'success',
      );
    }
    // Nothing accepted ran twice. A refusal while Redis went away may be a job whose adding only
    // lost its reply: if a worker took it before the refused claim was undone, it ran, once.
    for (const [runId, records] of files) {
      expect(accepted.includes(runId) || refusedIds.includes(runId), runId).to.equal(true);
      expect(records, runId).to.have.length(1);
    }
    const starts = workers.flatMap((worker) =>
      worker
        .logs()
        .filter((line) => line.msg === 'run starting')
        .map((line) => String(line.runId)),
    );
    expect(starts.length).to.equal(new Set(starts).size);
    // No claim is left behind: every run id is free again on both api instances.
    const client = new Redis(redis.url);
    try {
      // A claim goes just after its run file is final.
      await until('every claim released', async () => {
        return (await client.smembers('agentic:claims:active')).length === 0;
      }).catch(async (error: unknown) => {
        for (const runId of await client.smembers('agentic:claims:active')) {
          const claim = await client.hgetall(`agentic:claim:${runId}`);
          const lines = [...apis, ...workers].flatMap((p) =>
            p
              .logs()
              .filter((line) => JSON.stringify(line).includes(runId))
              .map((line) => `${p.role}: ${JSON.stringify(line)}`),
          );
          console.error('LEFT', runId, JSON.stringify(claim), accepted.includes(runId), lines);
        }
        throw error;
      });
    } finally {
      client.disconnect();
    }
    for (const process of [...apis, ...workers]) {
      expect(process.output()).not.to.match(/unhandled|UnhandledPromiseRejection/i);
    }
  });

  it('counts the rate limit across both api processes', async () => {
    const { apis } = await start(2, 0, { AGENTIC_RATE_LIMIT_DEFAULT: '6/minute' });
    const [a, b] = apis as [ClusterProcess, ClusterProcess];
    const statuses: number[] = [];
    for (const api of [a, b, a, b, a, b]) {
      statuses.push((await request(`${api.url}/api/runs`)).status);
    }
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 200]);
    for (const api of [a, b]) {
      const over = await request(`${api.url}/api/runs`);
      expect(over.status).to.equal(429);
      expect(over.body.detail).to.be.a('string');
    }
  });

  it('locks a client out of both api processes after failures spread over them', async () => {
    const { apis } = await start(2, 0, {
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      AGENTIC_API_KEY: 'right-key',
      AGENTIC_AUTH_LOCKOUT_THRESHOLD: '3',
      AGENTIC_AUTH_LOCKOUT_WINDOW_SECONDS: '60',
      AGENTIC_AUTH_LOCKOUT_DURATION_SECONDS: '120',
    });
    const [a, b] = apis as [ClusterProcess, ClusterProcess];
    const get = (api: ClusterProcess, key: string) =>
      request(`${api.url}/api/runs`, { headers: { 'x-api-key': key } });
    for (const api of [a, b, a]) expect((await get(api, 'wrong')).status).to.equal(401);
    for (const api of [b, a]) {
      const locked = await get(api, 'right-key');
      expect(locked.status).to.equal(429);
      expect(locked.body.detail).to.equal('Too many failed authentication attempts');
    }
  });
});
