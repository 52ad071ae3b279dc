/**
 * Workers that die (issue 26, point 3): with AGENTIC_RESUME=auto a run whose worker was killed
 * (SIGKILL) or paused past its lease (SIGSTOP) is resumed by the other worker from its run file
 * and journal in the shared runs directory, exactly once, its finished steps not run again; a
 * client of the api instance watching it sees one run; the paused worker, once continued, does
 * not write the end of a run taken over (the fence). With `manual` the run stays interrupted
 * until POST /api/runs/{run_id}/resume on the api instance, which queues the resume to a worker.
 * Real processes (1 api instance, 2 workers) on a real redis-server.
 */
import { expect } from 'chai';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { connectWs } from '../http/events-fixtures.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { startCluster, type Cluster, type ClusterProcess } from './cluster.js';

/** Steps append `start`/`done` lines (time, run, step) to the side-effect log. */
const AGENTS = `import { appendFileSync } from 'node:fs';
const LOG = process.env.TAKEOVER_SIDE_EFFECTS;
const pause = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('aborted')); }, { once: true });
});
export default {
  side_effect: async ({ input, runId, step, signal }) => {
    appendFileSync(LOG, \`start \${Date.now()} \${runId} \${step.name}\\n\`);
    await pause(Number(input.ms), signal);
    appendFileSync(LOG, \`done \${Date.now()} \${runId} \${step.name} \${process.pid}\\n\`);
    return { output: { step: step.name }, modelUsed: null, tokensUsed: null };
  },
};
`;
/** Four steps; `b` is long, so a kill lands while it runs. */
const WORKFLOW = `name: takeover
steps:
  - { name: a, agent: side_effect, inputs: { ms: 50 } }
  - { name: b, agent: side_effect, depends_on: [a], inputs: { ms: 2500 } }
  - { name: c, agent: side_effect, depends_on: [b], inputs: { ms: 50 } }
  - { name: d, agent: side_effect, depends_on: [c], inputs: { ms: 50 } }
`;

async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

interface Deployment {
  redis: TestRedis;
  root: string;
  runsDir: string;
  sideEffects: string;
  cluster: Cluster;
  api: ClusterProcess;
  client: Redis;
}

async function deploy(env: Record<string, string>): Promise<Deployment> {
  const redis = await startTestRedis();
  const root = await mkdtemp(join(tmpdir(), 'agentic-takeover-'));
  const runsDir = join(root, 'runs');
  const sideEffects = join(root, 'side-effects.log');
  await writeFile(sideEffects, '');
  await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
  await writeFile(join(root, 'workflows', 'takeover.yaml'), WORKFLOW);
  await writeFile(join(root, 'agents.mjs'), AGENTS);
  const cluster = await startCluster({
    redisUrl: redis.url,
    runsDir,
    workflowsDir: join(root, 'workflows'),
    apis: 1,
    workers: 2,
    env: {
      AGENTIC_AGENTS_MODULE: join(root, 'agents.mjs'),
      TAKEOVER_SIDE_EFFECTS: sideEffects,
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      AGENTIC_WORKER_LOCK_SECONDS: '2',
      AGENTIC_OWNER_LEASE_SECONDS: '3',
      ...env,
    },
  });
  return {
    redis,
    root,
    runsDir,
    sideEffects,
    cluster,
    api: cluster.apis[0]!,
    client: new Redis(redis.url),
  };
}

async function teardown(d: Deployment | undefined): Promise<void> {
  if (d === undefined) return;
  d.client.disconnect();
  await d.cluster.stop();
  await d.redis.stop();
  await rm(d.root, { recursive: true, force: true });
}

/** Whether the journal of run `runId` holds `text`. */
async function journalHas(runsDir: string, runId: string, text: string): Promise<boolean> {
  const name = (await readdir(runsDir)).find((n) => n.endsWith(`_${runId}.json.journal`));
  if (name === undefined) return false;
  return (await readFile(join(runsDir, name), 'utf8').catch(() => '')).includes(text);
}

async function recordOf(runsDir: string, runId: string): Promise<RunRecord | undefined> {
  const name = (await readdir(runsDir)).find((n) => n.endsWith(`_${runId}.json`));
  if (name === undefined) return undefined;
  try {
    return JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}

/** The owner id (store/owner.ts) of a worker process, from its owner file. */
async function ownerOf(runsDir: string, worker: ClusterProcess): Promise<string | undefined> {
  for (const name of await readdir(runsDir)) {
    if (!name.endsWith('.owner')) continue;
    try {
      const info = JSON.parse(await readFile(join(runsDir, name), 'utf8')) as {
        id: string;
        pid: number;
      };
      if (info.pid === worker.child.pid) return info.id;
    } catch {
      // being written
    }
  }
  return undefined;
}

const ended = (r: RunRecord | undefined): boolean =>
  r !== undefined && r.status !== 'running' && r.status !== 'pending';

/** Executions of each step: `run step` → list of [start, done?, pid?]. */
function executions(text: string): Map<string, { done: boolean; pid?: string }[]> {
  const byStep = new Map<string, { done: boolean; pid?: string }[]>();
  for (const line of text.split('\n')) {
    const [kind, , runId, step, pid] = line.split(' ');
    if (runId === undefined || step === undefined) continue;
    const key = `${runId} ${step}`;
    const list = byStep.get(key) ?? [];
    byStep.set(key, list);
    if (kind === 'start') list.push({ done: false });
    else if (kind === 'done' && list.length > 0) {
      list[list.length - 1] = { done: true, ...(pid === undefined ? {} : { pid }) };
    }
  }
  return byStep;
}

describe('workers that die: another worker resumes their runs (real processes, Redis)', function () {
  this.timeout(180_000);

  describe('AGENTIC_RESUME=auto', () => {
    let d: Deployment | undefined;
    before(async () => {
      d = await deploy({});
    });
    after(() => teardown(d));

    it('SIGKILL of a worker running runs: every run ends success on the other, each finished step once', async () => {
      const { api, cluster, runsDir, client } = d!;
      const ids = Array.from({ length: 8 }, (_, i) => `killed-${i}`);
      for (const id of ids) {
        expect(
          (await post(`${api.url}/api/run`, { workflow: 'takeover', run_id: id })).status,
        ).to.equal(200);
      }
      // Watched on the api instance over WebSocket: one of the victim's runs.
      await until('every run in its long step', async () => {
        const text = await readFile(d!.sideEffects, 'utf8');
        return ids.every((id) => text.includes(` ${id} b\n`));
      });
      const records = await Promise.all(ids.map((id) => recordOf(runsDir, id)));
      const [first, second] = cluster.workers as [ClusterProcess, ClusterProcess];
      const firstOwner = await ownerOf(runsDir, first);
      const onFirst = ids.filter((_, i) => records[i]?.owner === firstOwner);
      // The worker running more of the runs is killed.
      const victim = onFirst.length * 2 >= ids.length ? first : second;
      const survivor = victim === first ? second : first;
      const victimOwner = await ownerOf(runsDir, victim);
      const victimRuns = ids.filter((_, i) => records[i]?.owner === victimOwner);
      expect(victimRuns.length).to.be.greaterThan(0);
      const watched = victimRuns[0]!;
      const watcher = connectWs(`${api.url.replace(/^http/, 'ws')}/ws/execution/${watched}`);
      await watcher.events.until((items) =>
        items.some((e) => e.type === 'step_start' && e.step === 'b'),
      );
      // Step a's end is durable (its journal line committed) before the kill: a kill within the
      // journal's commit window after a step's end may run that step again (docs/durable-runs.md).
      await until('step a journaled in every run of the victim', async () =>
        (
          await Promise.all(victimRuns.map((id) => journalHas(runsDir, id, '{"i":0,"step":')))
        ).every(Boolean),
      );
      victim.child.kill('SIGKILL');
      await victim.exit;
      cluster.workers.splice(cluster.workers.indexOf(victim), 1);

      await until('every run ended', async () =>
        (await Promise.all(ids.map((id) => recordOf(runsDir, id)))).every(ended),
      );
      const finals = await Promise.all(ids.map((id) => recordOf(runsDir, id)));
      for (const [i, record] of finals.entries()) {
        expect(record, ids[i]).to.include({ status: 'success' });
        expect(record!.steps.map((s) => s.status)).to.deep.equal(Array(4).fill('success'));
      }
      // The victim's runs were resumed, once each, reason worker_lost.
      for (const id of victimRuns) {
        const resumes = (finals[ids.indexOf(id)]!.extra as { resumes?: { reason: string }[] })
          .resumes;
        expect(resumes, id).to.have.length(1);
        expect(resumes![0]!.reason).to.equal('worker_lost');
      }
      const taken = survivor
        .logs()
        .filter((l) => l.msg === 'run of a dead worker taken over')
        .map((l) => String(l.runId));
      expect([...taken].sort()).to.deep.equal([...victimRuns].sort());
      // Each step's side effect once, except the one running at the kill (at most twice).
      const text = await readFile(d!.sideEffects, 'utf8');
      const byStep = executions(text);
      const linesOf = (id: string): string =>
        text
          .split('\n')
          .filter((l) => l.includes(` ${id} `))
          .join('\n') + `\nvictim runs ${victimRuns.join(',')}\n${survivor.output().slice(-4000)}`;
      for (const id of ids) {
        for (const step of ['a', 'b', 'c', 'd']) {
          const list = byStep.get(`${id} ${step}`) ?? [];
          expect(list.at(-1)?.done, `${id} ${step}`).to.equal(true);
          const finished = list.filter((e) => e.done);
          expect(finished, `${id} ${step} finished more than once\n${linesOf(id)}`).to.have.length(
            1,
          );
          expect(list.length).to.be.at.most(victimRuns.includes(id) && step === 'b' ? 2 : 1);
        }
      }
      // The client saw one run: a workflow_start resumed then the rest, one workflow_end success.
      const live = await watcher.events.until((items) =>
        items.some((e) => e.type === 'workflow_end'),
      );
      const resumedAt = live.findIndex((e) => e.type === 'workflow_start' && e.resumed === true);
      expect(resumedAt, JSON.stringify(live.map((e) => e.type))).to.be.greaterThan(0);
      const ends = live.filter((e) => e.type === 'workflow_end');
      expect(ends).to.have.length(1);
      expect(ends[0]).to.include({ status: 'success' });
      watcher.ws.close();
      await watcher.closed;
      // Every claim released.
      await until(
        'claims released',
        async () => (await client.scard('agentic:claims:active')) === 0,
      );
    });

    it('a worker paused past its lease (SIGSTOP) does not write the end of the run taken over (the fence)', async () => {
      const { api, cluster, runsDir } = d!;
      // A fresh second worker: the kill above left one.
      if (cluster.workers.length < 2) cluster.workers.push(await cluster.add('worker'));
      const id = 'paused-run';
      expect(
        (await post(`${api.url}/api/run`, { workflow: 'takeover', run_id: id })).status,
      ).to.equal(200);
      await until('step b started', async () =>
        (await readFile(d!.sideEffects, 'utf8')).includes(` ${id} b\n`),
      );
      const record = await recordOf(runsDir, id);
      const owners = await Promise.all(cluster.workers.map((w) => ownerOf(runsDir, w)));
      const paused = cluster.workers[owners.indexOf(record?.owner)]!;
      expect(paused).to.not.equal(undefined);
      paused.child.kill('SIGSTOP');
      try {
        await until('the run ended on the other worker', async () =>
          ended(await recordOf(runsDir, id)),
        );
      } finally {
        paused.child.kill('SIGCONT');
      }
      const final = await recordOf(runsDir, id);
      expect(final).to.include({ status: 'success' });
      // Continued, the paused worker finishes its copy of the run and stops at the fence.
      await until('the fence', () =>
        Promise.resolve(
          paused
            .logs()
            .some(
              (l) =>
                l.runId === id &&
                l.msg ===
                  'run taken over by another worker meanwhile; its end record is not written here',
            ),
        ),
      );
      expect(await recordOf(runsDir, id)).to.deep.equal(final);
    });
  });

  describe('AGENTIC_RESUME=manual', () => {
    let d: Deployment | undefined;
    before(async () => {
      d = await deploy({ AGENTIC_RESUME: 'manual' });
    });
    after(() => teardown(d));

    it('leaves the run interrupted until POST /api/runs/{id}/resume on the api instance queues it', async () => {
      const { api, cluster, runsDir } = d!;
      const id = 'manual-run';
      expect(
        (await post(`${api.url}/api/run`, { workflow: 'takeover', run_id: id })).status,
      ).to.equal(200);
      await until('step b started', async () =>
        (await readFile(d!.sideEffects, 'utf8')).includes(` ${id} b\n`),
      );
      const record = await recordOf(runsDir, id);
      const owners = await Promise.all(cluster.workers.map((w) => ownerOf(runsDir, w)));
      const victim = cluster.workers[owners.indexOf(record?.owner)]!;
      victim.child.kill('SIGKILL');
      await victim.exit;
      cluster.workers.splice(cluster.workers.indexOf(victim), 1);
      await until('the run interrupted', async () => ended(await recordOf(runsDir, id)));
      expect(await recordOf(runsDir, id)).to.include({ status: 'failed', error: 'interrupted' });
      // Its claim goes with the end the finaliser announces (within the lock window).
      await until(
        'the claim released',
        async () => (await d!.client.exists(`agentic:claim:${id}`)) === 0,
      );
      const resumed = await post(`${api.url}/api/runs/${id}/resume`, {});
      expect(resumed).to.deep.equal({ status: 200, body: { run_id: id, status: 'running' } });
      await until('the run ended', async () => (await recordOf(runsDir, id))?.status === 'success');
      const final = await recordOf(runsDir, id);
      expect(
        (final!.extra as { resumes?: { reason: string }[] }).resumes?.map((r) => r.reason),
      ).to.deep.equal(['request']);
      const byStep = executions(await readFile(d!.sideEffects, 'utf8'));
      expect(byStep.get(`${id} a`)).to.have.length(1);
      // Ended: a second resume is a 409.
      expect((await post(`${api.url}/api/runs/${id}/resume`, {})).status).to.equal(409);
    });
  });
});
