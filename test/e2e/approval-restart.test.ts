/**
 * Pending approvals survive a restart (issue 26, point 3): a run whose step waits for approval
 * when its process dies (SIGKILL) is resumed, the step asks again with the same call id (derived
 * from the run, step, tool and arguments), the listing shows it, and approving it with the id the
 * client already had ends the run success. The real service (dist/), in one process restarted,
 * and with Redis (an api instance and two workers, the holder killed).
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../../src/generated/run-record.js';
import { startTestRedis } from '../redis/redis-server.js';
import { startCluster } from '../scale/cluster.js';
import { spawnService, until } from './service-process.js';

const WORKFLOW = `name: approve_write
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: out.txt, content: approved-after-restart } }
`;

interface Listed {
  call_id: string;
  run_id: string;
}

async function listed(url: string): Promise<Listed[]> {
  const answer = await fetch(`${url}/api/approvals`);
  if (answer.status !== 200) return [];
  return ((await answer.json()) as { approvals: Listed[] }).approvals;
}

async function approve(url: string, callId: string): Promise<number> {
  const answer = await fetch(`${url}/api/approvals/${callId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approve' }),
  });
  return answer.status;
}

async function startRun(url: string, runId: string): Promise<void> {
  const answer = await fetch(`${url}/api/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'approve_write', run_id: runId }),
  });
  expect(answer.status, await answer.text()).to.equal(200);
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

describe('pending approvals survive a restart (real process)', function () {
  this.timeout(120_000);
  let root: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-approval-restart-'));
    await mkdir(join(root, 'workflows'));
    await mkdir(join(root, 'files'));
    await writeFile(join(root, 'workflows', 'approve_write.yaml'), WORKFLOW);
    env = {
      AGENTIC_PORT: '0',
      AGENTIC_HOST: '127.0.0.1',
      AGENTIC_RUNS_DIR: join(root, 'runs'),
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_NO_LLM: '1',
      AGENTIC_APPROVAL_PROVIDER: 'http',
      AGENTIC_FILE_BASE_DIR: join(root, 'files'),
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      LOG_FORMAT: 'json',
    };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('one process: kill -9 while a run waits for approval, restart, approve with the same id, success', async () => {
    let service = spawnService(env);
    try {
      let url = await service.listening;
      await startRun(url, 'waits-1');
      let before: Listed | undefined;
      await until('the call listed', async () => {
        before = (await listed(url)).find((e) => e.run_id === 'waits-1');
        return before !== undefined;
      });
      service.child.kill('SIGKILL');
      await service.exit;
      service = spawnService(env);
      url = await service.listening;
      let after: Listed | undefined;
      await until('the call listed again after the restart', async () => {
        after = (await listed(url)).find((e) => e.run_id === 'waits-1');
        return after !== undefined;
      });
      expect(after!.call_id).to.equal(before!.call_id);
      expect(await approve(url, before!.call_id)).to.equal(200);
      await until('the run ended', async () => {
        const r = await recordOf(join(root, 'runs'), 'waits-1');
        return r !== undefined && r.status !== 'running';
      });
      const record = await recordOf(join(root, 'runs'), 'waits-1');
      expect(record).to.include({ status: 'success' });
      expect((record!.extra as { resumes?: unknown[] }).resumes).to.have.length(1);
      expect(await readFile(join(root, 'files', 'out.txt'), 'utf8')).to.equal(
        'approved-after-restart',
      );
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
      await service.exit;
    }
  });

  it('with Redis: the worker holding the call killed, the other resumes the run, same id answerable on the api instance', async () => {
    const redis = await startTestRedis();
    const cluster = await startCluster({
      redisUrl: redis.url,
      runsDir: join(root, 'runs'),
      workflowsDir: join(root, 'workflows'),
      apis: 1,
      workers: 2,
      entry: 'dist',
      env: { ...env, AGENTIC_WORKER_LOCK_SECONDS: '2' },
    });
    try {
      const url = cluster.apis[0]!.url;
      await startRun(url, 'waits-2');
      let before: Listed | undefined;
      await until('the call listed', async () => {
        before = (await listed(url)).find((e) => e.run_id === 'waits-2');
        return before !== undefined;
      });
      const holder = cluster.workers.find((w) =>
        w.logs().some((l) => l.msg === 'run starting' && l.runId === 'waits-2'),
      );
      // `run starting` is a debug line: without it, the holder is the worker whose pid the
      // run's owner file names.
      const record = await recordOf(join(root, 'runs'), 'waits-2');
      const owners = await Promise.all(
        cluster.workers.map(async (w) => {
          for (const name of await readdir(join(root, 'runs'))) {
            if (!name.endsWith('.owner')) continue;
            const info = JSON.parse(await readFile(join(root, 'runs', name), 'utf8')) as {
              id: string;
              pid: number;
            };
            if (info.pid === w.child.pid) return info.id;
          }
          return undefined;
        }),
      );
      const victim = holder ?? cluster.workers[owners.indexOf(record?.owner)]!;
      victim.child.kill('SIGKILL');
      await victim.exit;
      await until(
        'the call listed again by the other worker',
        async () => {
          const entry = (await listed(url)).find((e) => e.run_id === 'waits-2');
          const resumed = await recordOf(join(root, 'runs'), 'waits-2');
          return (
            entry?.call_id === before!.call_id &&
            (resumed?.extra as { resumes?: unknown[] } | undefined)?.resumes !== undefined
          );
        },
        60_000,
      );
      expect(await approve(url, before!.call_id)).to.equal(200);
      await until('the run ended', async () => {
        const r = await recordOf(join(root, 'runs'), 'waits-2');
        return r !== undefined && r.status !== 'running';
      });
      expect(await recordOf(join(root, 'runs'), 'waits-2')).to.include({ status: 'success' });
    } finally {
      await cluster.stop();
      await redis.stop();
    }
  });
});
