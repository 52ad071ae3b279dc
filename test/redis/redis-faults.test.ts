/**
 * Redis lost while two services run: readiness 503 naming Redis, new runs refused with 503 and
 * a clear detail, runs already executing finish and are persisted, nothing rejects unhandled;
 * once Redis is back everything resumes (readiness, new runs, streams served across services)
 * and clients of other services get the events of the outage, without a gap.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { connectWs, range, seqs, type WsClient } from '../http/events-fixtures.js';
import { call, startTestService, type TestService } from '../http/harness.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

const WORKFLOW = `name: approve_write
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: out.txt, content: approved } }
`;

const wsUrl = (service: TestService, runId: string): string =>
  `${service.url.replace(/^http/, 'ws')}/ws/execution/${runId}`;

/** Resolves once the connection reaches `status` (at once when it is there). */
async function until(redis: Redis, status: 'ready' | 'down'): Promise<void> {
  if (status === 'ready' ? redis.status === 'ready' : redis.status !== 'ready') return;
  await once(redis, status === 'ready' ? 'ready' : 'close');
}

describe('scale-out: Redis lost and back while serving', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let a: TestService;
  let b: TestService;
  let files: string;
  const clients: WsClient[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await startTestRedis();
    files = await mkdtemp(join(tmpdir(), 'agentic-faults-files-'));
    const env = {
      REDIS_URL: redis.url,
      AGENTIC_APPROVAL_PROVIDER: 'http',
      AGENTIC_FILE_BASE_DIR: files,
    };
    a = await startTestService({ env });
    // B executes nothing (role api): every run queued on A executes on A's worker.
    b = await startTestService({ env: { ...env, AGENTIC_ROLE: 'api' }, root: a.root });
    await writeFile(join(a.workflowsDir, 'approve_write.yaml'), WORKFLOW);
  });
  after(async () => {
    for (const client of clients) client.ws.close();
    await b?.dispose();
    await a?.dispose();
    await redis?.stop();
    await rm(files, { recursive: true, force: true });
    process.off('unhandledRejection', onUnhandled);
  });

  async function startWaitingRun(): Promise<string> {
    const res = await call(a.url, 'POST', '/api/run', { workflow: 'approve_write' });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    const own = connectWs(wsUrl(a, runId));
    clients.push(own);
    await own.events.until((items) => items.some((e) => e.type === 'approval_required'));
    return runId;
  }

  async function approveAll(): Promise<void> {
    const listed = await call(a.url, 'GET', '/api/approvals');
    const approvals = (listed.body as { approvals: { call_id: string }[] }).approvals;
    for (const approval of approvals) {
      const res = await call(a.url, 'POST', `/api/approvals/${approval.call_id}`, {
        decision: 'approve',
      });
      expect(res.status, res.text).to.be.lessThan(300);
    }
  }

  it('refuses new runs and fails readiness while Redis is away, persists running runs, then resumes', async () => {
    const running = [await startWaitingRun(), await startWaitingRun()];
    // Watched on B through the outage: the events of that stretch are kept and sent afterwards.
    const watchers = running.map((runId) => {
      const client = connectWs(wsUrl(b, runId));
      clients.push(client);
      return client;
    });
    for (const client of watchers) {
      await client.events.until((items) => items.some((e) => e.type === 'approval_required'));
    }

    await redis.stop();
    await Promise.all([until(a.scale!.redis, 'down'), until(b.scale!.redis, 'down')]);

    for (const service of [a, b]) {
      const ready = await call(service.url, 'GET', '/api/health/ready');
      expect(ready.status).to.equal(503);
      const body = ready.body as { detail: string; checks: Record<string, { ok: boolean }> };
      expect(body.checks.redis).to.deep.equal({ ok: false, detail: 'Redis is unreachable' });
      expect(body.detail).to.include('redis (Redis is unreachable)');
      const refused = await call(service.url, 'POST', '/api/run', { workflow: 'approve_write' });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
      expect(refused.body).to.deep.equal({
        detail:
          'Redis is unavailable: new runs are refused until it is back (runs already executing go on)',
      });
    }
    // Served meanwhile: history (rate limit and lockout fall back to the per-instance ones).
    expect((await call(b.url, 'GET', '/api/runs')).status).to.equal(200);

    await approveAll();
    for (const runId of running) {
      const record = await a.finished(runId);
      expect(record.status).to.equal('success');
      const found = await a.history.getByRunId(runId);
      expect(found?.record.status).to.equal('success');
    }

    await redis.restart();
    await Promise.all([until(a.scale!.redis, 'ready'), until(b.scale!.redis, 'ready')]);
    for (const client of watchers) {
      const events = await client.events.until(
        (items) => items.some((e) => e.type === 'workflow_end'),
        'workflow_end',
      );
      expect(seqs(events)).to.deep.equal(range(0, events.length - 1));
    }
    for (const service of [a, b]) {
      const ready = await call(service.url, 'GET', '/api/health/ready');
      expect(ready.status, ready.text).to.equal(200);
      expect((ready.body as { checks: Record<string, unknown> }).checks.redis).to.deep.equal({
        ok: true,
      });
    }
    // Streams flow again across services: a new run on A is watched whole on B.
    const runId = await startWaitingRun();
    const remote = connectWs(wsUrl(b, runId));
    clients.push(remote);
    await remote.events.until((items) => items.some((e) => e.type === 'approval_required'));
    await approveAll();
    const events: WorkflowEvent[] = await remote.events.until(
      (items) => items.some((e) => e.type === 'workflow_end'),
      'workflow_end',
    );
    expect(seqs(events)).to.deep.equal(range(0, events.length - 1));
    expect(unhandled).to.deep.equal([]);
  });

  it('shuts down cleanly while Redis is away', async () => {
    const lone = await startTestRedis();
    const service = await startTestService({ env: { REDIS_URL: lone.url } });
    await lone.stop();
    await until(service.scale!.redis, 'down');
    // Resolves (no hang on the blocking reader or on commands queued for a dead Redis).
    await service.dispose();
    expect(service.scale!.available()).to.equal(false);
    expect(unhandled).to.deep.equal([]);
  });
});
