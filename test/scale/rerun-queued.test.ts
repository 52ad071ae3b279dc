/**
 * Rerun from a step where runs are queued to workers (REDIS_URL): an api instance (this process,
 * `AGENTIC_ROLE=api`, so it executes nothing) and a worker process of the service entry point,
 * one real redis-server, one shared runs and workflows directory. The api instance checks the
 * rerun as a single process does and queues the fork; the worker runs it seeded with the source
 * run's upstream outcomes. Every step appends `<pid> <run id> <step>` to a side-effect log, so
 * the log says which process executed which step of which run, and how often.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { packageRoot } from '../../src/config/index.js';
import { RUN_QUEUE } from '../../src/scale/run-queue.js';
import type { RunRecord } from '../../src/engine/types.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { call, startTestService, type TestService } from '../http/harness.js';
import { connectWs, openSse, type WsClient } from '../http/events-fixtures.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { spawnService, type ClusterProcess } from './cluster.js';

const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

/** The side-effect agent: one line per execution; fails when its input says so. */
const AGENTS = `import { appendFileSync } from 'node:fs';
export default {
  side_effect: async ({ input, runId, step }) => {
    appendFileSync(process.env.RERUN_SIDE_EFFECTS, \`\${process.pid} \${runId} \${step.name}\\n\`);
    if (input.fail === true) throw new Error(\`step \${step.name} failed as asked\`);
    return { output: { step: step.name, seen: input.seen ?? null }, modelUsed: null, tokensUsed: null };
  },
};
`;

/** A chain a → b → c whose last step fails when the run's input `fail` is true. */
function chain(name: string): string {
  return [
    `name: ${name}`,
    'inputs:',
    '  fail: { type: boolean, default: false }',
    'outputs:',
    "  last: { from: '${steps.c.outputs.seen}' }",
    'steps:',
    '  - { name: a, agent: side_effect }',
    "  - { name: b, agent: side_effect, depends_on: [a], inputs: { seen: '${steps.a.outputs.step}' } }",
    "  - { name: c, agent: side_effect, depends_on: [b], max_attempts: 1, inputs: { fail: '${inputs.fail}', seen: '${steps.b.outputs.step}' } }",
    '',
  ].join('\n');
}

const SLOW = `name: slow
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 60000 } }
`;

/** Waits for what only the history index shows (fed through Redis), checked every 25 ms. */
async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function agentic(args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--import', TSX, join(packageRoot, 'src', 'cli.ts'), ...args],
    { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('rerun from a step with runs queued to workers (api instance, worker process, real Redis)', function () {
  // A worker process through tsx, and the CLI spawned once: generous on a loaded machine.
  this.timeout(120_000);
  let redis: TestRedis;
  let root: string;
  let sideEffects: string;
  let svc: TestService;
  let worker: ClusterProcess;

  before(async () => {
    redis = await startTestRedis();
    root = await mkdtemp(join(tmpdir(), 'agentic-rerun-queued-'));
    sideEffects = join(root, 'side-effects.log');
    await appendFile(sideEffects, '');
    await mkdir(join(root, 'workflows'));
    await writeFile(join(root, 'agents.mjs'), AGENTS);
    await writeFile(join(root, 'workflows', 'chain.yaml'), chain('chain'));
    await writeFile(join(root, 'workflows', 'slow.yaml'), SLOW);
    const shared = {
      REDIS_URL: redis.url,
      AGENTIC_AGENTS_MODULE: join(root, 'agents.mjs'),
    };
    svc = await startTestService({ root, env: { ...shared, AGENTIC_ROLE: 'api' } });
    worker = await spawnService('worker', {
      ...shared,
      AGENTIC_RUNS_DIR: svc.runsDir,
      AGENTIC_WORKFLOWS_DIR: svc.workflowsDir,
      AGENTIC_WORKER_PORT: '0',
      AGENTIC_NO_LLM: '1',
      LOG_FORMAT: 'json',
      RERUN_SIDE_EFFECTS: sideEffects,
    });
  });
  after(async () => {
    if (worker !== undefined && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await worker?.exit;
    await svc?.dispose();
    await redis?.stop();
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  /** The side-effect log's lines of one run: `[pid, step]` in order. */
  async function executions(runId: string): Promise<[number, string][]> {
    const lines = (await readFile(sideEffects, 'utf8')).split('\n').filter(Boolean);
    return lines
      .map((line) => line.split(' '))
      .filter(([, run]) => run === runId)
      .map(([pid, , step]) => [Number(pid), step!]);
  }

  /** A WebSocket client of the api instance following one run (events from the worker). */
  function follow(runId: string): WsClient {
    return connectWs(`${svc.url.replace(/^http/, 'ws')}/ws/execution/${runId}`);
  }

  /**
   * The final record of a run executed on the worker: its workflow_end reached a client of the
   * api instance, then its end record the api's run history (fed through Redis too; the rerun
   * route reads the source run there).
   */
  async function finished(runId: string, client = follow(runId)): Promise<RunRecord> {
    try {
      await client.events.until(
        (items) => items.some((e) => e.type === 'workflow_end'),
        `workflow_end of ${runId}`,
      );
    } finally {
      client.ws.close();
    }
    let record: RunRecord | undefined;
    await until(`the end of ${runId} in the run history`, async () => {
      record = (await svc.history.getByRunId(runId))?.record;
      return record?.status === 'success' || record?.status === 'failed';
    });
    return record!;
  }

  async function endedRun(workflow: string, input: Record<string, unknown>): Promise<RunRecord> {
    const res = await call(svc.url, 'POST', '/api/run', { workflow, input_data: input });
    expect(res.status, res.text).to.equal(200);
    return finished((res.body as { run_id: string }).run_id);
  }

  it('reruns a failed last step on a worker: upstream steps reused, not executed again; events reach the api', async () => {
    const source = await endedRun('chain', { fail: true });
    expect(source.status).to.equal('failed');
    expect(source.steps.map((step) => step.status)).to.deep.equal(['success', 'success', 'failed']);
    const pid = worker.child.pid!;
    expect(await executions(source.run_id)).to.deep.equal([
      [pid, 'a'],
      [pid, 'b'],
      [pid, 'c'],
    ]);

    const res = await call(svc.url, 'POST', `/api/runs/${source.run_id}/rerun`, {
      from_step: 'c',
      inputs: { fail: false },
    });
    expect(res.status, res.text).to.equal(200);
    const { run_id: forkId, status } = res.body as { run_id: string; status: string };
    expect(status).to.equal('pending');
    expect(forkId).to.not.equal(source.run_id);
    const ws = follow(forkId);
    try {
      const fork = await finished(forkId, ws);
      expect(fork.status, fork.error ?? '').to.equal('success');
      expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 'c' });
      expect(fork.inputs).to.deep.equal({ fail: false });
      expect(fork.final_output).to.deep.equal({ last: 'b' });
      expect(fork.steps.map((step) => step.metadata.reused_from?.run_id ?? null)).to.deep.equal([
        source.run_id,
        source.run_id,
        null,
      ]);
      expect(fork.steps[1]!.output).to.deep.equal(source.steps[1]!.output);
      // Only c executed, on the worker; a and b of the source ran once, and never again.
      expect(await executions(forkId)).to.deep.equal([[pid, 'c']]);
      expect((await executions(source.run_id)).length).to.equal(3);

      // A client of the api instance follows the fork like any queued run.
      const end = (items: WorkflowEvent[]) => items.some((e) => e.type === 'workflow_end');
      const frames = await ws.events.until(end, 'workflow_end over WebSocket');
      expect(frames.map((e) => e.seq)).to.deep.equal(frames.map((_, i) => i));
      expect(frames.map((e) => [e.type, 'step' in e ? e.step : null])).to.deep.include.members([
        ['step_end', 'a'],
        ['step_end', 'b'],
        ['step_start', 'c'],
        ['step_end', 'c'],
      ]);
      expect(frames.at(-1)).to.include({ type: 'workflow_end', status: 'success' });
      // A late client of the api gets the same run from the shared replay store.
      const late = await openSse(`${svc.url}/api/runs/${forkId}/stream`);
      try {
        expect(late.status).to.equal(200);
        await late.frames.until(
          (items) => items.some((e) => e.type === 'workflow_end'),
          'workflow_end over SSE',
        );
        const overSse = late.events().map((e) => [e.seq, e.type]);
        expect(overSse).to.deep.equal(frames.map((e) => [e.seq, e.type]));
      } finally {
        late.abort();
      }

      // And its detail, as for any run.
      const detail = await call(svc.url, 'GET', `/api/runs/${forkId}`);
      expect(detail.status).to.equal(200);
      expect((detail.body as RunRecord).extra.forked_from).to.deep.equal({
        run_id: source.run_id,
        step: 'c',
      });
    } finally {
      ws.ws.close();
    }
  });

  it('agentic rerun --url against the api instance: the fork runs on the worker', async () => {
    const source = await endedRun('chain', { fail: true });
    expect(source.status).to.equal('failed');
    const cli = await agentic(
      ['rerun', source.run_id, '--from', 'c', '--input', 'fail=false', '--url', svc.url],
      {},
    );
    expect(cli.code, cli.stderr).to.equal(0);
    const forkId = cli.stdout.trim();
    const fork = await finished(forkId);
    expect(fork.status, fork.error ?? '').to.equal('success');
    expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 'c' });
    expect(await executions(forkId)).to.deep.equal([[worker.child.pid!, 'c']]);
  });

  it('a fork whose step left the workflow before a worker took it ends failed, saying why', async () => {
    const source = await endedRun('chain', { fail: true });
    const file = join(svc.workflowsDir, 'chain.yaml');
    // No worker takes the fork while the queue is paused: the workflow changes meanwhile.
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(RUN_QUEUE, { connection, prefix: 'agentic' });
    let forkId: string;
    try {
      await queue.pause();
      const res = await call(svc.url, 'POST', `/api/runs/${source.run_id}/rerun`, {
        from_step: 'c',
      });
      expect(res.status, res.text).to.equal(200);
      forkId = (res.body as { run_id: string }).run_id;
      await writeFile(file, 'name: chain\nsteps:\n  - { name: a, agent: side_effect }\n');
    } finally {
      await queue.resume();
      await queue.close();
      connection.disconnect();
    }
    try {
      const fork = await finished(forkId);
      expect(fork).to.include({
        status: 'failed',
        error: `could not start: step "c" is no longer in workflow chain (it changed since run ${source.run_id})`,
      });
      expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 'c' });
      expect(fork.steps).to.deep.equal([]);
      expect(await executions(forkId)).to.deep.equal([]);
    } finally {
      await writeFile(file, chain('chain'));
    }
  });

  describe('refusals, as a single process answers them, with nothing queued', () => {
    let source: RunRecord;
    let path: string;
    let filesBefore: string[];
    before(async () => {
      source = await endedRun('chain', { fail: true });
      path = `/api/runs/${source.run_id}/rerun`;
    });
    beforeEach(async () => {
      filesBefore = (await readdir(svc.runsDir)).sort();
    });
    afterEach(async () => {
      expect((await readdir(svc.runsDir)).sort()).to.deep.equal(filesBefore);
    });

    it('404 for an unknown run', async () => {
      const res = await call(svc.url, 'POST', '/api/runs/never-ran/rerun', { from_step: 'a' });
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ detail: 'Run not found' });
    });

    it('422 for a body without from_step, a step the run does not have, invalid inputs', async () => {
      const missing = await call(svc.url, 'POST', path, { inputs: {} });
      expect(missing.status).to.equal(422);
      expect(missing.body).to.deep.equal({
        detail: [{ loc: ['body', 'from_step'], msg: 'Field required', type: 'missing' }],
      });
      const unknown = await call(svc.url, 'POST', path, { from_step: 'nope' });
      expect(unknown.status).to.equal(422);
      const msg = `run ${source.run_id} has no step "nope"`;
      expect(unknown.body).to.deep.equal({
        detail: [{ loc: ['body', 'from_step'], msg, type: 'value_error.unknown_step' }],
      });
      const bad = await call(svc.url, 'POST', path, { from_step: 'c', inputs: { fail: 'maybe' } });
      expect(bad.status).to.equal(422);
      const detail = (bad.body as { detail: { loc: unknown[] }[] }).detail;
      expect(detail.map((d) => d.loc)).to.deep.equal([['body', 'inputs', 'fail']]);
    });

    it('409 for a run still running on the worker', async () => {
      const res = await call(svc.url, 'POST', '/api/run', { workflow: 'slow', run_id: 'sleepy' });
      expect(res.status).to.equal(200);
      const rerun = await call(svc.url, 'POST', '/api/runs/sleepy/rerun', { from_step: 'wait' });
      expect(rerun.status).to.equal(409);
      expect(rerun.body).to.deep.equal({
        detail: 'run sleepy is still running; rerun it once it has ended',
      });
      expect((await call(svc.url, 'POST', '/api/runs/sleepy/cancel')).status).to.equal(200);
      await finished('sleepy');
      // Its own file is the only one added.
      filesBefore = (await readdir(svc.runsDir)).sort();
    });

    it('409 when the workflow no longer has the step, or is gone', async () => {
      const doomed = await endedRun('chain', { fail: true });
      const file = join(svc.workflowsDir, 'chain.yaml');
      filesBefore = (await readdir(svc.runsDir)).sort();
      try {
        await writeFile(
          file,
          'name: chain\nsteps:\n  - { name: a, agent: side_effect }\n  - { name: b, agent: side_effect, depends_on: [a] }\n',
        );
        const doomedPath = `/api/runs/${doomed.run_id}/rerun`;
        const changed = await call(svc.url, 'POST', doomedPath, { from_step: 'c' });
        expect(changed.status).to.equal(409);
        expect(changed.body).to.deep.equal({
          detail: `step "c" is no longer in workflow chain (it changed since run ${doomed.run_id})`,
        });
        await rm(file);
        const gone = await call(svc.url, 'POST', doomedPath, { from_step: 'c' });
        expect(gone.status).to.equal(409);
        expect(gone.body).to.deep.equal({
          detail: `the workflow chain of run ${doomed.run_id} is no longer in the workflows directory; a rerun needs it`,
        });
      } finally {
        await writeFile(file, chain('chain'));
      }
    });
  });
});
