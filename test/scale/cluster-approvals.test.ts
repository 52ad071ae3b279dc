/**
 * Approvals of a worker that dies (issue 23, point 6), on real processes: 1 api instance and 2
 * workers on one redis-server, `AGENTIC_APPROVAL_PROVIDER=http`. The worker holding a pending
 * tool call is killed with SIGKILL: the call leaves `GET /api/approvals` within the liveness
 * window that also declares the worker's run interrupted, answering it is a 404 with a
 * `detail`, and nothing of it stays in Redis. Its arguments reach Redis only when the events may
 * show them (`AGENTIC_APPROVAL_EVENT_ARGUMENTS=1`). A worker stopped with SIGTERM ends the call
 * with its run at once, leaving only the mark that makes a late answer a 409.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalsResponse } from '../../src/generated/api/approvals-response.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { startCluster, type Cluster, type ClusterProcess } from './cluster.js';

/** In the tool call's arguments only: found anywhere in Redis, the arguments were stored. */
const SECRET = 'argument-only-7f3c9a';
const WORKFLOW = `name: approve_write
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: out.txt, content: ${SECRET} } }
`;
/** AGENTIC_WORKER_LOCK_SECONDS: a worker silent this long is dead, its runs interrupted. */
const LOCK_SECONDS = 2;

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

/** Polls `check` every 50 ms until it holds, failing after `ms`. */
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every key of the Redis and its contents as text (stream entries one by one). */
async function dump(client: Redis): Promise<Map<string, string[]>> {
  const contents = new Map<string, string[]>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await client.type(key);
      let parts: string[];
      if (type === 'string') parts = [(await client.get(key)) ?? ''];
      else if (type === 'hash') parts = Object.entries(await client.hgetall(key)).flat();
      else if (type === 'set') parts = await client.smembers(key);
      else if (type === 'zset') parts = await client.zrange(key, 0, -1);
      else if (type === 'list') parts = await client.lrange(key, 0, -1);
      else if (type === 'stream') {
        parts = (await client.xrange(key, '-', '+')).map(([, fields]) => fields.join(' '));
      } else parts = [];
      contents.set(key, parts);
    }
  } while (cursor !== '0');
  return contents;
}

/**
 * Where the secret is stored, apart from what the run's event stream may show: a `step_start`
 * event (a `tier0_tool` step's input is its tool call) and, with `shown`, the `approval_required`
 * event (AGENTIC_APPROVAL_EVENT_ARGUMENTS=1).
 */
async function secretKeys(client: Redis, shown: boolean): Promise<string[]> {
  const found: string[] = [];
  for (const [key, parts] of await dump(client)) {
    const holding = parts.filter(
      (part) =>
        part.includes(SECRET) &&
        !(key.endsWith(':events') && part.includes('"type":"step_start"')) &&
        !(shown && key.endsWith(':events') && part.includes('"type":"approval_required"')),
    );
    if (holding.length > 0) found.push(`${key}: ${holding.join(' | ').slice(0, 300)}`);
  }
  return found;
}

describe('scale-out: approvals of a worker that dies or stops (1 api, 2 workers, real processes)', function () {
  this.timeout(180_000);
  let redis: TestRedis;
  let client: Redis;
  let root: string;
  let runsDir: string;
  let cluster: Cluster | undefined;

  beforeEach(async () => {
    redis = await startTestRedis();
    client = new Redis(redis.url);
    root = await mkdtemp(join(tmpdir(), 'agentic-scale-approvals-'));
    runsDir = join(root, 'runs');
    await mkdir(join(root, 'workflows'));
    await mkdir(join(root, 'files'));
    await writeFile(join(root, 'workflows', 'approve_write.yaml'), WORKFLOW);
  });
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
    client.disconnect();
    await redis.destroy();
    await rm(root, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>): Promise<Cluster> {
    cluster = await startCluster({
      redisUrl: redis.url,
      runsDir,
      workflowsDir: join(root, 'workflows'),
      apis: 1,
      workers: 2,
      env: {
        LOG_LEVEL: 'debug',
        // The listing is polled: no 429 for the test's own requests.
        AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
        AGENTIC_APPROVAL_PROVIDER: 'http',
        AGENTIC_FILE_BASE_DIR: join(root, 'files'),
        AGENTIC_WORKER_LOCK_SECONDS: String(LOCK_SECONDS),
        // A killed worker's run ends interrupted here (with auto another worker resumes it and
        // asks again: test/e2e/approval-restart.test.ts).
        AGENTIC_RESUME: 'off',
        ...env,
      },
    });
    return cluster;
  }

  const listed = async (api: ClusterProcess): Promise<ApprovalsResponse['approvals']> => {
    const answer = await request(`${api.url}/api/approvals`);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return (answer.body as unknown as ApprovalsResponse).approvals;
  };

  /** Starts the run and waits until its tool call is listed as waiting; returns the entry. */
  async function waitingCall(api: ClusterProcess) {
    const started = await request(`${api.url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'approve_write' }),
    });
    expect(started.status, JSON.stringify(started.body)).to.equal(200);
    const runId = started.body.run_id as string;
    let entry: ApprovalsResponse['approvals'][number] | undefined;
    await until('the call listed as waiting', async () => {
      entry = (await listed(api)).find((item) => item.run_id === runId);
      return entry !== undefined;
    });
    return { runId, entry: entry! };
  }

  function holder(workers: ClusterProcess[], runId: string): ClusterProcess {
    const found = workers.filter((worker) =>
      worker.logs().some((line) => line.msg === 'run starting' && line.runId === runId),
    );
    expect(found, 'exactly one worker runs the run').to.have.length(1);
    return found[0]!;
  }

  async function runRecord(runId: string): Promise<RunRecord | undefined> {
    const name = (await readdir(runsDir)).find((file) => file.endsWith(`_${runId}.json`));
    if (name === undefined) return undefined;
    return JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
  }

  /**
   * Kills the holder of the waiting call; the call must leave the listing within the liveness
   * window (the lock, plus BullMQ's stall check every half of it, plus a margin for this loaded
   * machine), answering it is a clear 404, and nothing of it stays in Redis.
   */
  async function killHolder(
    api: ClusterProcess,
    workers: ClusterProcess[],
    runId: string,
    shown: boolean,
  ) {
    const [{ call_id: callId }] = (await listed(api)).filter((item) => item.run_id === runId) as [
      ApprovalsResponse['approvals'][number],
    ];
    const victim = holder(workers, runId);
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exit;
    const windowMs = LOCK_SECONDS * 1500 + 5_000;
    await until(
      'the call of the dead worker no longer listed',
      async () => !(await listed(api)).some((item) => item.call_id === callId),
      windowMs,
    );
    const goneMs = Date.now() - killedAt;
    await until(
      'the run declared interrupted',
      async () => (await runRecord(runId))?.error === 'interrupted',
      windowMs,
    );
    const interruptedMs = Date.now() - killedAt;
    console.log(
      `      call gone from the listing ${goneMs} ms after SIGKILL; run interrupted after ${interruptedMs} ms (lock ${LOCK_SECONDS * 1000} ms)`,
    );

    const answer = await request(`${api.url}/api/approvals/${callId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(answer.status).to.equal(404);
    expect(answer.body.detail).to.be.a('string').and.not.empty;
    expect(await readFile(join(root, 'files', 'out.txt')).catch(() => 'absent')).to.equal('absent');

    // The run's event stream keeps its events (approval_required among them) as long as any
    // ended run's: AGENTIC_EVENT_STREAM_TTL_SECONDS. Nothing else of the call stays.
    const stream = `agentic:run:${runId}:events`;
    const holding = async (): Promise<string[]> =>
      [...(await dump(client)).entries()]
        .filter(
          ([key, parts]) =>
            key !== stream && (key.includes(callId) || parts.some((part) => part.includes(callId))),
        )
        .map(([key, parts]) => `${key}: ${parts.join(' | ').slice(0, 300)}`);
    await until(
      'nothing of the call left in Redis',
      async () => (await holding()).length === 0,
      windowMs,
    ).catch(async (error: unknown) => {
      console.error('LEFT', await holding());
      throw error;
    });
    const ttl = await client.pttl(stream);
    expect(ttl).to.be.within(1, 3_600_000);
    expect(await secretKeys(client, shown)).to.deep.equal([]);
  }

  it('with AGENTIC_APPROVAL_EVENT_ARGUMENTS off, never writes the arguments to Redis; the call of a killed worker goes with it', async () => {
    const { apis, workers } = await start({});
    const api = apis[0]!;
    const { runId, entry } = await waitingCall(api);
    expect(entry).to.not.have.property('arguments');
    // While the call waits: its arguments are nowhere in Redis (but in the step's own input).
    expect(await secretKeys(client, false)).to.deep.equal([]);
    await killHolder(api, workers, runId, false);
  });

  it('a worker stopped with SIGTERM denies its waiting call and leaves nothing of it in Redis', async () => {
    const { apis, workers } = await start({ AGENTIC_SHUTDOWN_GRACE_SECONDS: '0' });
    const api = apis[0]!;
    const { runId, entry } = await waitingCall(api);
    const worker = holder(workers, runId);
    worker.child.kill('SIGTERM');
    expect(await worker.exit).to.equal(0);
    // Stopped, not dead: the call ended with its run, at once, not after the liveness window.
    expect(await listed(api)).to.deep.equal([]);
    expect((await runRecord(runId))?.status).to.equal('failed');
    const answer = await request(`${api.url}/api/approvals/${entry.call_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(answer.status).to.equal(409);
    expect(answer.body.detail).to.be.a('string').and.not.empty;
    const keys = await client.keys('agentic:approval*');
    expect(keys).to.deep.equal([`agentic:approval:decided:${entry.call_id}`]);
  });

  it('with AGENTIC_APPROVAL_EVENT_ARGUMENTS=1, lists the arguments, and leaves none in Redis once the worker is killed', async () => {
    const { apis, workers } = await start({ AGENTIC_APPROVAL_EVENT_ARGUMENTS: '1' });
    const api = apis[0]!;
    const { runId, entry } = await waitingCall(api);
    expect(entry.arguments).to.deep.equal({ path: 'out.txt', content: SECRET });
    await killHolder(api, workers, runId, true);
  });
});
