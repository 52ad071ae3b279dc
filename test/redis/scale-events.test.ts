/**
 * Two services sharing one Redis and one runs directory (A in role `all`, B in role `api`, as two
 * instances behind a load balancer): a run started on A (executed by A's worker, the only one)
 * is watched on B over WebSocket and SSE, replay then live,
 * with no gap and no duplicate; B's history learns of A's runs without a restart.
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ApprovalsResponse } from '../../src/generated/api/approvals-response.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import type { RunListResponse } from '../../src/generated/api/run-list-response.js';
import { connectWs, openSse, range, seqs, type WsClient } from '../http/events-fixtures.js';
import { call, startTestService, type TestService } from '../http/harness.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

/** Resolves once `condition` holds, checked after each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** Every event up to the run's end (a WebSocket stays open after it). */
const untilEnd = (client: WsClient): Promise<WorkflowEvent[]> =>
  client.events.until((items) => items.some((e) => e.type === 'workflow_end'), 'workflow_end');

/** A run that stops at its tool call until it is approved over HTTP (on the service running it). */
const WORKFLOW = `name: approve_write
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: out.txt, content: approved } }
  - name: after
    agent: tier0_echo
    inputs: { text: done }
`;

const wsUrl = (service: TestService, runId: string): string =>
  `${service.url.replace(/^http/, 'ws')}/ws/execution/${runId}`;

describe('scale-out: event streams and history shared through Redis', function () {
  this.timeout(20_000);
  let redis: TestRedis;
  let a: TestService;
  let b: TestService;
  let files: string;
  const clients: WsClient[] = [];

  before(async () => {
    redis = await startTestRedis();
    files = await mkdtemp(join(tmpdir(), 'agentic-scale-files-'));
    const env = {
      REDIS_URL: redis.url,
      AGENTIC_APPROVAL_PROVIDER: 'http',
      AGENTIC_FILE_BASE_DIR: files,
    };
    a = await startTestService({ env });
    // B executes nothing (role api): every run queued on A executes on A's worker.
    b = await startTestService({ env: { ...env, AGENTIC_ROLE: 'api' }, root: a.root });
    await writeFile(`${a.workflowsDir}/approve_write.yaml`, WORKFLOW);
  });
  after(async () => {
    await b?.dispose();
    await a?.dispose();
    await redis?.stop();
    await rm(files, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) {
      client.ws.close();
      await client.closed;
    }
  });

  /** Starts a run on A and waits (on A) until it waits for approval. */
  async function startWaitingRun(runId?: string): Promise<string> {
    const res = await call(a.url, 'POST', '/api/run', {
      workflow: 'approve_write',
      ...(runId === undefined ? {} : { run_id: runId }),
    });
    expect(res.status, res.text).to.equal(200);
    const id = (res.body as { run_id: string }).run_id;
    const own = connectWs(wsUrl(a, id));
    clients.push(own);
    await own.events.until((items) => items.some((e) => e.type === 'approval_required'));
    return id;
  }

  async function approve(runId: string): Promise<void> {
    const listed = await call(a.url, 'GET', '/api/approvals');
    const approvals = (listed.body as { approvals: { run_id: string; call_id: string }[] })
      .approvals;
    const waiting = approvals.find((entry) => entry.run_id === runId);
    expect(waiting, JSON.stringify(listed.body)).to.not.equal(undefined);
    const res = await call(a.url, 'POST', `/api/approvals/${waiting!.call_id}`, {
      decision: 'approve',
    });
    expect(res.status, res.text).to.be.lessThan(300);
  }

  /** Resolves once B's history lists the run as finished (B learns it from the record stream). */
  function finishedOnB(runId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = (): void => {
        const entry = b.history.list({ limit: 1000 }).find((r) => r.run_id === runId);
        if (entry === undefined || entry.status === 'running' || entry.status === 'pending') return;
        stop();
        resolve();
      };
      const stop = b.scale!.onIndexed(check);
      check();
    });
  }

  function expectWholeRun(events: WorkflowEvent[]): void {
    expect(seqs(events)).to.deep.equal(range(0, events.length - 1));
    expect(events[0]?.type).to.equal('workflow_start');
    expect(events.at(-1)).to.include({ type: 'workflow_end', status: 'success' });
    expect(events.map((e) => e.type)).to.include('approval_required');
  }

  it('serves a run of A on B over WebSocket: replay then live, no gap, no duplicate', async () => {
    const runId = await startWaitingRun();
    const remote = connectWs(wsUrl(b, runId));
    clients.push(remote);
    await remote.events.until((items) => items.some((e) => e.type === 'approval_required'));
    await approve(runId);
    const events = await untilEnd(remote);
    expectWholeRun(events);
    // The same client code sees the same sequence as on the service running it.
    const local = connectWs(wsUrl(a, runId));
    clients.push(local);
    expect(await untilEnd(local)).to.deep.equal(events);
  });

  it('serves a run of A on B over SSE: replay then live, no gap, no duplicate', async () => {
    const runId = await startWaitingRun();
    const sse = await openSse(`${b.url}/api/runs/${runId}/stream`);
    expect(sse.status).to.equal(200);
    await sse.frames.until((items) => items.some((e) => e.type === 'approval_required'));
    await approve(runId);
    await sse.frames.done();
    expectWholeRun(sse.events());
  });

  it('delivers every event of a run that starts on A after a client waits for it on B', async () => {
    const runId = `late-${Date.now()}`;
    const waiting = connectWs(wsUrl(b, runId));
    clients.push(waiting);
    await waiting.opened;
    // The socket is registered with B's hub once the upgrade is answered; the run starts now.
    await startWaitingRun(runId);
    await waiting.events.until((items) => items.some((e) => e.type === 'approval_required'));
    await approve(runId);
    expectWholeRun(await untilEnd(waiting));
  });

  it('watches many runs on B with one blocking connection, whatever the number of clients', async () => {
    const clientCount = async (): Promise<number> =>
      String(await a.scale!.redis.client('LIST'))
        .trim()
        .split('\n').length;
    const before = await clientCount();
    const runIds = [await startWaitingRun(), await startWaitingRun(), await startWaitingRun()];
    const watchers = runIds.flatMap((runId) =>
      [1, 2, 3].map(() => {
        const client = connectWs(wsUrl(b, runId));
        clients.push(client);
        return client;
      }),
    );
    for (const client of watchers) {
      await client.events.until((items) => items.some((e) => e.type === 'approval_required'));
    }
    expect(b.scale!.remote.stats()).to.deep.equal({ runs: 3, listeners: 9 });
    expect(await clientCount()).to.equal(before);
    for (const runId of runIds) await approve(runId);
    for (const client of watchers) expectWholeRun(await untilEnd(client));
  });

  it('answers 404 over SSE for a run not started while a WebSocket client waits for it', async () => {
    const runId = `unstarted-${Date.now()}`;
    const waiting = connectWs(wsUrl(b, runId));
    clients.push(waiting);
    await waiting.opened;
    await until(() => b.scale!.remote.follows(runId));
    const sse = await openSse(`${b.url}/api/runs/${runId}/stream`);
    expect(sse.status).to.equal(404);
  });

  it('delivers each event once to a client waiting on A for a run that starts on A', async () => {
    // Waiting both in-process and on the shared stream: the copies through Redis are dropped.
    const runId = `here-${Date.now()}`;
    const waiting = connectWs(wsUrl(a, runId));
    clients.push(waiting);
    await waiting.opened;
    await startWaitingRun(runId);
    await waiting.events.until((items) => items.some((e) => e.type === 'approval_required'));
    await approve(runId);
    expectWholeRun(await untilEnd(waiting));
  });

  it("lists A's finished run in B's history without a restart, and the summaries agree", async () => {
    const runId = await startWaitingRun();
    await approve(runId);
    const record = await a.finished(runId);
    await finishedOnB(runId);
    const onB = await call(b.url, 'GET', '/api/runs?limit=1000');
    const listed = (onB.body as RunListResponse).find((r) => r.run_id === runId);
    expect(listed?.status).to.equal(record.status);
    // B may have re-read the finished file after A indexed it: compare the settled state.
    const onAAgain = await call(a.url, 'GET', '/api/runs?limit=1000');
    expect(onB.body).to.deep.equal(onAAgain.body);
    const summaryA = await call(a.url, 'GET', '/api/runs/summary');
    const summaryB = await call(b.url, 'GET', '/api/runs/summary');
    expect(summaryB.body).to.deep.equal(summaryA.body);
  });

  it('replays a finished run on B from its stream, and from the run file once the stream expired', async () => {
    const runId = await startWaitingRun();
    await approve(runId);
    await a.finished(runId);
    const fromStream = connectWs(wsUrl(b, runId));
    clients.push(fromStream);
    const streamed = await untilEnd(fromStream);
    expectWholeRun(streamed);
    await finishedOnB(runId);
    await a.scale!.sender.drained();
    await a.scale!.redis.del(a.scale!.keys.runEvents(runId));
    const fromFile = connectWs(wsUrl(b, runId));
    clients.push(fromFile);
    const replayed = await untilEnd(fromFile);
    expect(replayed.map((e) => e.type)).to.include('workflow_end');
    expect(replayed[0]?.type).to.equal('workflow_start');
  });

  it("lists and answers on B a call waiting on A's worker, then keeps nothing of it but the 409", async () => {
    const runId = await startWaitingRun();
    const redisClient = new Redis(redis.url);
    try {
      const listed = await call(b.url, 'GET', '/api/approvals');
      const waiting = (listed.body as ApprovalsResponse).approvals.find((e) => e.run_id === runId);
      expect(waiting, JSON.stringify(listed.body)).to.not.equal(undefined);
      expect(waiting).to.not.have.property('arguments');
      // The worker's hash holds the call, without its arguments (the events do not show them).
      const [workerId] = await redisClient.smembers('agentic:approvals:workers');
      const stored = await redisClient.hget(
        `agentic:approvals:pending:${workerId}`,
        waiting!.call_id,
      );
      expect(JSON.parse(stored!)).to.not.have.property('args');
      expect(await redisClient.pttl(`agentic:approvals:pending:${workerId}`)).to.be.above(0);

      const res = await call(b.url, 'POST', `/api/approvals/${waiting!.call_id}`, {
        decision: 'approve',
      });
      expect(res.status, res.text).to.equal(200);
      expect((await a.finished(runId)).status).to.equal('success');
      const again = await call(b.url, 'POST', `/api/approvals/${waiting!.call_id}`, {
        decision: 'approve',
      });
      expect(again.status).to.equal(409);
      expect(again.body).to.have.property('detail');
      expect(await redisClient.exists(`agentic:approvals:pending:${workerId}`)).to.equal(0);
      expect(await redisClient.sismember('agentic:approvals:workers', workerId!)).to.equal(0);
    } finally {
      redisClient.disconnect();
    }
  });

  it('expires a run stream AGENTIC_EVENT_STREAM_TTL_SECONDS after the run ends', async () => {
    const runId = await startWaitingRun();
    const key = a.scale!.keys.runEvents(runId);
    // A's own client sees approval_required from the local hub, possibly before the ordered
    // sender has appended it: the stream exists once what was sent so far reached Redis.
    await a.scale!.sender.drained();
    const entries = await a.scale!.redis.xrange(key, '-', '+');
    expect(entries.length).to.be.greaterThan(0);
    expect(await a.scale!.redis.pttl(key)).to.be.greaterThan(3_600_000);
    await approve(runId);
    await a.finished(runId);
    await a.scale!.sender.drained();
    const ttl = await a.scale!.redis.pttl(key);
    expect(ttl).to.be.within(3_500_000, 3_600_000);
  });
});
