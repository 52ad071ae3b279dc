import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { RUN_QUEUE } from '../../src/scale/run-queue.js';
import { connectWs, openSse } from '../http/events-fixtures.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { spawnService, startCluster, type Cluster, type ClusterProcess } from './cluster.js';

// Resolved here: children may run in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

const QUICK = `name: quick
steps:
  - { name: only, agent: tier0_echo, inputs: { text: hi } }
`;
const SLEEPY = `name: sleepy
steps:
  - { name: first, agent: tier0_echo, inputs: { text: one } }
  - { name: wait, agent: tier0_sleep, depends_on: [first], inputs: { ms: 60000 } }
`;
const SHORT = `name: short
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 1500 } }
`;

/**
 * Waits for what only the file system or Redis shows (a run file's end, a claim): checked
 * every 25 ms, failing after `ms`.
 */
async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
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

/** Runs `count` tasks with at most `width` in flight. */
async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>) {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** Run ids a process's log says it started (`run starting` is logged at debug level). */
function started(process: ClusterProcess): string[] {
  return process
    .logs()
    .filter((line) => line.msg === 'run starting')
    .map((line) => String(line.runId));
}

describe('scale-out dispatch: 2 api instances, 2 workers, one Redis (real processes)', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let root: string;
  let runsDir: string;
  let cluster: Cluster;
  let client: Redis;
  let apiA: ClusterProcess;
  let apiB: ClusterProcess;

  before(async () => {
    redis = await startTestRedis();
    root = await mkdtemp(join(tmpdir(), 'agentic-scale-'));
    runsDir = join(root, 'runs');
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await writeFile(join(root, 'workflows', 'quick.yaml'), QUICK);
    await writeFile(join(root, 'workflows', 'sleepy.yaml'), SLEEPY);
    await writeFile(join(root, 'workflows', 'short.yaml'), SHORT);
    cluster = await startCluster({
      redisUrl: redis.url,
      runsDir,
      workflowsDir: join(root, 'workflows'),
      apis: 2,
      workers: 2,
      env: {
        LOG_LEVEL: 'debug',
        AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
        AGENTIC_WORKER_LOCK_SECONDS: '2',
        AGENTIC_SHUTDOWN_GRACE_SECONDS: '20',
        // A SIGKILLed worker's run ends interrupted here (resumed by the other worker with auto:
        // test/scale/worker-takeover.test.ts).
        AGENTIC_RESUME: 'off',
      },
    });
    [apiA, apiB] = cluster.apis as [ClusterProcess, ClusterProcess];
    client = new Redis(redis.url);
  });
  after(async () => {
    client?.disconnect();
    await cluster?.stop();
    await redis?.stop();
    await rm(root, { recursive: true, force: true });
  });

  /** The run files of the runs directory, parsed. */
  async function runFiles(): Promise<RunRecord[]> {
    const names = (await readdir(runsDir)).filter((n) => /^[0-9].*\.json$/.test(n));
    return Promise.all(
      names.map(async (n) => JSON.parse(await readFile(join(runsDir, n), 'utf8')) as RunRecord),
    );
  }

  async function recordOf(runId: string): Promise<RunRecord | undefined> {
    const name = (await readdir(runsDir)).find((n) => n.endsWith(`_${runId}.json`));
    if (name === undefined) return undefined;
    return JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
  }

  async function ended(runId: string): Promise<RunRecord> {
    let record: RunRecord | undefined;
    await until(`the end of ${runId}`, async () => {
      record = await recordOf(runId);
      return record !== undefined && record.status !== 'running';
    });
    return record!;
  }

  it('executes 500 runs posted to both api instances on both workers, each once', async () => {
    const ids = await pool(500, 32, async (i) => {
      const api = i % 2 === 0 ? apiA : apiB;
      const answer = await post(`${api.url}/api/run`, { workflow: 'quick', run_id: `bulk-${i}` });
      expect(answer).to.deep.equal({
        status: 200,
        body: { run_id: `bulk-${i}`, status: 'pending' },
      });
      return `bulk-${i}`;
    });
    await until(
      'every run file ended',
      async () => (await runFiles()).filter((r) => r.status === 'success').length === 500,
      40_000,
    );
    const records = await runFiles();
    expect(records.map((r) => r.run_id).sort()).to.deep.equal([...ids].sort());
    expect(new Set(records.map((r) => r.status))).to.deep.equal(new Set(['success']));
    // Each run started once, and both workers took a share.
    const [one, two] = cluster.workers.map(started) as [string[], string[]];
    expect(one.length + two.length).to.equal(500);
    expect(new Set([...one, ...two]).size).to.equal(500);
    expect(one.length).to.be.greaterThan(0);
    expect(two.length).to.be.greaterThan(0);
    // Both api instances' histories list them (they learn of the runs through Redis).
    for (const api of [apiA, apiB]) {
      await until('the history listing every run', async () => {
        const response = await fetch(`${api.url}/api/runs?limit=1000`);
        const list = (await response.json()) as { run_id: string; status: string }[];
        return (
          list.filter((r) => r.run_id.startsWith('bulk-') && r.status === 'success').length === 500
        );
      });
    }
    // Every claim was released: nothing is active any more.
    await until(
      'the claims released',
      async () => (await client.scard('agentic:claims:active')) === 0,
    );
  });

  it('serves a run started on api A live on api B over WebSocket and SSE, each event once', async () => {
    const runId = 'watched-on-b';
    const ws = connectWs(`${apiB.url.replace(/^http/, 'ws')}/ws/execution/${runId}`);
    await ws.opened;
    const answer = await post(`${apiA.url}/api/run`, { workflow: 'short', run_id: runId });
    expect(answer.status).to.equal(200);
    // SSE answers 404 for a run not started: it joins once the run runs (replay, then live).
    await until('the run running', async () => (await recordOf(runId))?.status === 'running');
    const sse = await openSse(`${apiB.url}/api/runs/${runId}/stream`);
    try {
      expect(sse.status).to.equal(200);
      const end = (items: { type?: unknown }[]) => items.some((e) => e.type === 'workflow_end');
      await ws.events.until(end, 'workflow_end over WebSocket');
      await sse.frames.until(end, 'workflow_end over SSE');
      const overWs = ws.events.items.map((event) => event.seq);
      expect(overWs).to.deep.equal(Array.from({ length: overWs.length }, (_, i) => i));
      expect(sse.events().map((event) => event.seq)).to.deep.equal(overWs);
      expect(ws.events.items.at(-1)).to.include({ type: 'workflow_end', status: 'success' });
    } finally {
      sse.abort();
      ws.ws.close();
    }
  });

  it('serves SSE on api B for a run accepted by api A that has not started yet (no 404)', async () => {
    // Claimed and queued by A; no worker takes it while the queue is paused, so none of its
    // events exists anywhere when the client (sent to B by a load balancer) asks for them.
    const queue = new Queue(RUN_QUEUE, { connection: client, prefix: 'agentic' });
    await queue.pause();
    let sse: Awaited<ReturnType<typeof openSse>> | undefined;
    try {
      const answer = await post(`${apiA.url}/api/run`, { workflow: 'quick', run_id: 'sse-early' });
      expect(answer.status).to.equal(200);
      sse = await openSse(`${apiB.url}/api/runs/sse-early/stream`);
      expect(sse.status).to.equal(200);
    } finally {
      await queue.resume();
      await queue.close();
    }
    try {
      await sse.frames.until((items) => items.some((e) => e.type === 'workflow_end'));
      const events = sse.events();
      expect(events.map((event) => event.seq)).to.deep.equal(events.map((_, i) => i));
      expect(events.at(-1)).to.include({ type: 'workflow_end', status: 'success' });
    } finally {
      sse.abort();
    }
  });

  it('answers 409 on api B for a run_id active through api A, and cancels it from B', async () => {
    const first = await post(`${apiA.url}/api/run`, { workflow: 'sleepy', run_id: 'shared-id' });
    expect(first.status).to.equal(200);
    const again = await post(`${apiB.url}/api/run`, { workflow: 'quick', run_id: 'shared-id' });
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal({ detail: "run 'shared-id' is already active" });
    await until('the run running', async () => (await recordOf('shared-id'))?.status === 'running');
    const cancelled = await post(`${apiB.url}/api/runs/shared-id/cancel`, {});
    expect(cancelled).to.deep.equal({
      status: 200,
      body: { run_id: 'shared-id', status: 'cancelling' },
    });
    const record = await ended('shared-id');
    expect(record).to.include({ status: 'failed', error: 'cancelled' });
    await until(
      'the claim released',
      async () => (await client.exists('agentic:claim:shared-id')) === 0,
    );
    const unknown = await post(`${apiA.url}/api/runs/never-started/cancel`, {});
    expect(unknown.status).to.equal(404);
  });

  it('cancels a run still queued: it ends cancelled when a worker takes it', async () => {
    // Claimed and queued by api A, cancelled on B while the queue is paused (no worker takes it).
    const queue = new Queue(RUN_QUEUE, { connection: client, prefix: 'agentic' });
    await queue.pause();
    try {
      const first = await post(`${apiA.url}/api/run`, {
        workflow: 'sleepy',
        run_id: 'queued-cancel',
      });
      expect(first.status).to.equal(200);
      const cancelled = await post(`${apiB.url}/api/runs/queued-cancel/cancel`, {});
      expect(cancelled.status).to.equal(200);
      expect(await recordOf('queued-cancel')).to.equal(undefined);
    } finally {
      await queue.resume();
      await queue.close();
    }
    const record = await ended('queued-cancel');
    expect(record).to.include({ status: 'failed', error: 'cancelled' });
  });

  it('ends the run of a SIGKILLed worker failed/interrupted, once, without running it again', async () => {
    const answer = await post(`${apiA.url}/api/run`, { workflow: 'sleepy', run_id: 'killed-run' });
    expect(answer.status).to.equal(200);
    // The sleeping step has started, as its run's journal says (group commit).
    await until('the journal commit', async () => {
      const names = await readdir(runsDir);
      const journal = names.find((n) => n.endsWith('_killed-run.json.journal'));
      if (journal === undefined) return false;
      return (await readFile(join(runsDir, journal), 'utf8')).includes('{"i":1,"started"');
    });
    // Watched live on api B (the run executes on a worker) over WebSocket.
    const watcher = connectWs(`${apiB.url.replace(/^http/, 'ws')}/ws/execution/killed-run`);
    await watcher.events.until((items) =>
      items.some((e) => e.type === 'step_start' && e.step === 'wait'),
    );
    const holder = cluster.workers.find((w) => started(w).includes('killed-run'))!;
    const survivor = cluster.workers.find((w) => w !== holder)!;
    holder.child.kill('SIGKILL');
    await holder.exit;
    // Gone from the cluster at once: a failure below must not hand the next test a dead worker.
    cluster.workers.splice(cluster.workers.indexOf(holder), 1);
    const record = await ended('killed-run');
    expect(record).to.include({ status: 'failed', error: 'interrupted', failed_step_count: 1 });
    expect(record.steps.map((s) => [s.step_name, s.status])).to.deep.equal([
      ['first', 'success'],
      ['wait', 'failed'],
    ]);
    expect(record).not.to.have.property('owner');
    await until(
      'the claim released',
      async () => (await client.exists('agentic:claim:killed-run')) === 0,
    );
    // One workflow_end, live on B and in the run's shared stream, after every earlier event.
    const live = await watcher.events.until((items) =>
      items.some((e) => e.type === 'workflow_end'),
    );
    const ends = live.filter((e) => e.type === 'workflow_end');
    expect(ends).to.have.length(1);
    expect(ends[0]).to.include({ status: 'failed', error: 'interrupted' });
    expect(ends[0]!.seq).to.be.greaterThan(live.at(-2)!.seq);
    const stream = await client.xrange('agentic:run:killed-run:events', '-', '+');
    const types = stream.map(([, fields]) => (JSON.parse(fields[1]!) as { type: string }).type);
    expect(types.filter((type) => type === 'workflow_end')).to.have.length(1);
    expect(types.at(-1)).to.equal('workflow_end');
    watcher.ws.close();
    await watcher.closed;
    // Marked interrupted once, by the survivor: by its finaliser when the claim's lock expires
    // first, else by its orphan watch, which finds the dead owner on its own tick (then the
    // finaliser only announces the end: the one workflow_end checked above).
    const byFinaliser = survivor
      .logs()
      .filter((l) => l.msg === 'run of a dead worker marked interrupted')
      .map((l) => l.runId);
    const byWatch = survivor
      .logs()
      .filter((l) => l.msg === 'owner of runs gone; its runs marked interrupted')
      .flatMap((l) => l.files as string[])
      .filter((file) => file.endsWith('_killed-run.json'));
    expect([...byFinaliser, ...byWatch], survivor.output().slice(-3000)).to.have.length(1);
    // Never started on the survivor.
    expect(started(survivor)).not.to.include('killed-run');
  });

  it('a worker stopped with SIGTERM finishes its run, records it and exits 0', async () => {
    const [worker] = cluster.workers as [ClusterProcess];
    const answer = await post(`${apiB.url}/api/run`, { workflow: 'short', run_id: 'graceful-run' });
    expect(answer.status).to.equal(200);
    await until(
      'the run running',
      async () => (await recordOf('graceful-run'))?.status === 'running',
    );
    worker.child.kill('SIGTERM');
    expect(await worker.exit, worker.output()).to.equal(0);
    expect(await recordOf('graceful-run')).to.include({ status: 'success', error: null });
    expect(worker.logs().map((l) => l.msg)).to.include('agentic-runtime worker stopped');
    expect(await client.exists('agentic:claim:graceful-run')).to.equal(0);
  });
});

describe('worker process start-up', function () {
  this.timeout(20_000);

  it('exits 1 naming REDIS_URL when Redis is unreachable', async () => {
    const redis = await startTestRedis();
    const url = redis.url;
    await redis.stop();
    const failed = spawnService('worker', {
      REDIS_URL: url,
      AGENTIC_RUNS_DIR: join(tmpdir(), 'agentic-never-written'),
      LOG_FORMAT: 'json',
    });
    const error = await failed.then(
      () => undefined,
      (reason: unknown) => String(reason),
    );
    expect(error).to.match(/worker exited with 1 before it was ready/);
    expect(error).to.include(`REDIS_URL=${url}`);
    expect(error).to.include('Redis is unreachable');
  });

  it('`agentic worker -c 3` starts a worker with no listener and stops on SIGTERM with 0', async () => {
    const redis = await startTestRedis();
    const runs = await mkdtemp(join(tmpdir(), 'agentic-cli-worker-'));
    try {
      const child = spawn(
        process.execPath,
        ['--import', TSX, join(packageRoot, 'src', 'cli.ts'), 'worker', '-c', '3', '--no-llm'],
        {
          cwd: packageRoot,
          env: {
            PATH: process.env.PATH ?? '',
            REDIS_URL: redis.url,
            AGENTIC_RUNS_DIR: runs,
            LOG_FORMAT: 'json',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const started = await new Promise<Record<string, unknown>>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n').find((l) => l.includes('worker started'));
          if (line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
        });
        void exit.then(() => reject(new Error(output)));
      });
      expect(started).to.include({ concurrency: 3 });
      expect(output).not.to.include('listening');
      child.kill('SIGTERM');
      expect(await exit, output).to.equal(0);
    } finally {
      await redis.stop();
      await rm(runs, { recursive: true, force: true });
    }
  });

  it('exits 1 when AGENTIC_ROLE=worker has no REDIS_URL', async () => {
    const error = await spawnService('worker', { LOG_FORMAT: 'json' }).then(
      () => undefined,
      (reason: unknown) => String(reason),
    );
    expect(error).to.include('AGENTIC_ROLE=worker needs REDIS_URL');
  });
});
