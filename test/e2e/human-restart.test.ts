/**
 * A human step's question survives a restart (issue 27, point 4): a run waiting on a person when
 * its process dies (SIGKILL) is resumed (AGENTIC_RESUME=auto, the default) still waiting, with
 * the same request id (from the run id and the step), and the answer given after the restart
 * (with the CLI: `agentic approvals answer`) is the step's outputs. The real service (dist/),
 * one process restarted; and with Redis (an api instance and two workers, the holder killed),
 * listed and answered on the api instance through the workers' shared approvals.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { startTestRedis } from '../redis/redis-server.js';
import { startCluster } from '../scale/cluster.js';
import { spawnService, until } from './service-process.js';

const WORKFLOW = `name: ask_person
steps:
  - { name: draft, agent: tier0_echo, inputs: { notes: release notes } }
  - name: sign_off
    depends_on: [draft]
    human:
      prompt: 'Approve \${steps.draft.outputs.notes}?'
      schema: { type: object, required: [approved], properties: { approved: { type: boolean } } }
  - { name: publish, agent: tier0_echo, depends_on: [sign_off], inputs: { ok: '\${steps.sign_off.outputs.approved}' } }
`;

interface Listed {
  call_id: string;
  requested_at?: string;
  run_id: string;
  kind?: string;
  prompt?: string;
}

async function listed(url: string, runId: string): Promise<Listed | undefined> {
  const answer = await fetch(`${url}/api/approvals`);
  if (answer.status !== 200) return undefined;
  const body = (await answer.json()) as { approvals: Listed[] };
  return body.approvals.find((entry) => entry.run_id === runId);
}

async function startRun(url: string, runId: string): Promise<void> {
  const answer = await fetch(`${url}/api/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'ask_person', run_id: runId }),
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

/** `agentic approvals answer <id> <json> --url <url>` (dist/), its exit code and output. */
function cliAnswer(
  url: string,
  id: string,
  json: string,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    [join(packageRoot, 'dist', 'src', 'cli.js'), 'approvals', 'answer', id, json, '--url', url],
    { cwd: packageRoot, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe('a human step waiting for a person survives a restart (real process)', function () {
  this.timeout(120_000);
  let root: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-human-restart-'));
    await mkdir(join(root, 'workflows'));
    await writeFile(join(root, 'workflows', 'ask_person.yaml'), WORKFLOW);
    env = {
      AGENTIC_PORT: '0',
      AGENTIC_HOST: '127.0.0.1',
      AGENTIC_RUNS_DIR: join(root, 'runs'),
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_NO_LLM: '1',
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      LOG_FORMAT: 'json',
    };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('one process: kill -9 while the question waits, restart, same id listed, answered with the CLI', async () => {
    let service = spawnService(env);
    try {
      let url = await service.listening;
      await startRun(url, 'asks-1');
      let before: Listed | undefined;
      await until('the question listed', async () => {
        before = await listed(url, 'asks-1');
        return before !== undefined;
      });
      expect(before).to.include({ kind: 'input', prompt: 'Approve release notes?' });
      service.child.kill('SIGKILL');
      await service.exit;

      service = spawnService(env);
      url = await service.listening;
      let after: Listed | undefined;
      await until('the question listed again after the restart', async () => {
        after = await listed(url, 'asks-1');
        return after !== undefined;
      });
      // The same question, asked again: only its requested_at is the resumed attempt's.
      const { requested_at: _was, ...asked } = before!;
      expect(after).to.deep.include(asked);

      const wrong = await cliAnswer(url, before!.call_id, '{"approved": "yes"}');
      expect(wrong.code, wrong.output).to.equal(1);
      expect(wrong.output).to.include('answer: /approved must be boolean');
      const right = await cliAnswer(url, before!.call_id, '{"approved": true}');
      expect(right, right.output).to.deep.equal({
        code: 0,
        output: `answered ${before!.call_id}\n`,
      });
      await until('the run ended', async () => {
        const r = await recordOf(join(root, 'runs'), 'asks-1');
        return r !== undefined && r.status !== 'running';
      });
      const record = await recordOf(join(root, 'runs'), 'asks-1');
      expect(record).to.include({ status: 'success' });
      expect((record!.extra as { resumes?: unknown[] }).resumes).to.have.length(1);
      expect(record!.steps.map((s) => [s.step_name, s.status, s.output])).to.deep.equal([
        ['draft', 'success', { notes: 'release notes' }],
        ['sign_off', 'success', { approved: true }],
        ['publish', 'success', { ok: true }],
      ]);
      const again = await cliAnswer(url, before!.call_id, '{"approved": false}');
      expect(again.code).to.equal(1);
      expect(again.output).to.include('has already been answered');
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
      await service.exit;
    }
  });

  it('with Redis: the worker holding the question killed, the other asks again, answered on the api instance', async () => {
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
      await startRun(url, 'asks-2');
      let before: Listed | undefined;
      await until('the question listed on the api instance', async () => {
        before = await listed(url, 'asks-2');
        return before !== undefined;
      });
      expect(before).to.include({ kind: 'input', prompt: 'Approve release notes?' });
      // The run's first-record file is written a moment after its record is durable in the log
      // (docs/durable-run-files.md): wait for it to name its owner.
      let victim: (typeof cluster.workers)[number] | undefined;
      await until('the worker holding the run known', async () => {
        const record = await recordOf(join(root, 'runs'), 'asks-2');
        if (record?.owner === undefined) return false;
        for (const name of await readdir(join(root, 'runs'))) {
          if (!name.endsWith('.owner')) continue;
          const info = JSON.parse(await readFile(join(root, 'runs', name), 'utf8')) as {
            id: string;
            pid: number;
          };
          if (info.id === record.owner)
            victim = cluster.workers.find((w) => w.child.pid === info.pid);
        }
        return victim !== undefined;
      });
      if (victim === undefined) throw new Error('no worker holds the run');
      victim.child.kill('SIGKILL');
      await victim.exit;
      await until(
        'the question listed again by the other worker',
        async () => {
          const entry = await listed(url, 'asks-2');
          const resumed = await recordOf(join(root, 'runs'), 'asks-2');
          return (
            entry?.call_id === before!.call_id &&
            (resumed?.extra as { resumes?: unknown[] } | undefined)?.resumes !== undefined
          );
        },
        60_000,
      );
      const post = (answer: unknown) =>
        fetch(`${url}/api/approvals/${before!.call_id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ answer }),
        });
      const wrong = await post({ approved: 1 });
      expect(wrong.status).to.equal(422);
      expect(await wrong.json()).to.deep.equal({
        detail: [
          { loc: ['body', 'answer'], msg: '/approved must be boolean', type: 'value_error.answer' },
        ],
      });
      expect((await post({ approved: false })).status).to.equal(200);
      await until('the run ended', async () => {
        const r = await recordOf(join(root, 'runs'), 'asks-2');
        return r !== undefined && r.status !== 'running';
      });
      const ended = await recordOf(join(root, 'runs'), 'asks-2');
      expect(ended).to.include({ status: 'success' });
      expect(ended!.steps[1]!.output).to.deep.equal({ approved: false });
      await until('the answered question is a 409 on the api instance', async () => {
        return (await post({ approved: true })).status === 409;
      });
    } finally {
      await cluster.stop();
      await redis.stop();
    }
  });
});
