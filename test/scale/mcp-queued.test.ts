/**
 * `/mcp` on an api instance (`AGENTIC_ROLE=api`, REDIS_URL): the instance executes nothing, so
 * a tool call's run is queued to a worker process (real redis-server, shared runs and workflows
 * directories), its progress comes back over Redis, and its cancellation goes through the queue.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Progress } from '@modelcontextprotocol/client';
import { call, startTestService, type TestService } from '../http/harness.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { spawnService, type ClusterProcess } from './cluster.js';

const SLOW = `name: slow
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 60000 } }
`;

const TWO = `name: two
description: Two echo steps.
inputs:
  text: { type: string, default: hi }
outputs:
  said: { from: '\${steps.second.outputs.text}' }
steps:
  - { name: first, agent: tier0_echo, inputs: { text: '\${inputs.text}' } }
  - { name: second, agent: tier0_echo, depends_on: [first], inputs: { text: '\${steps.first.outputs.text}' } }
`;

describe('MCP server on an api instance with runs queued to workers (real Redis)', function () {
  // A worker process through tsx on a loaded machine.
  this.timeout(120_000);
  let redis: TestRedis;
  let root: string;
  let svc: TestService;
  let worker: ClusterProcess;
  let client: Client;

  before(async () => {
    redis = await startTestRedis();
    root = await mkdtemp(join(tmpdir(), 'agentic-mcp-queued-'));
    await mkdir(join(root, 'workflows'));
    await writeFile(join(root, 'workflows', 'slow.yaml'), SLOW);
    await writeFile(join(root, 'workflows', 'two.yaml'), TWO);
    svc = await startTestService({ root, env: { REDIS_URL: redis.url, AGENTIC_ROLE: 'api' } });
    worker = await spawnService('worker', {
      REDIS_URL: redis.url,
      AGENTIC_RUNS_DIR: svc.runsDir,
      AGENTIC_WORKFLOWS_DIR: svc.workflowsDir,
      AGENTIC_WORKER_PORT: '0',
      AGENTIC_NO_LLM: '1',
      LOG_FORMAT: 'json',
    });
    client = new Client({ name: 'agentic-mcp-queued-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    if (worker !== undefined && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await worker?.exit;
    await svc?.dispose();
    await redis?.stop();
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it('a call runs on the worker and answers its outputs, with progress over Redis', async () => {
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'two', arguments: { text: 'queued' } },
      { onprogress: (progress) => seen.push(progress) },
    );
    expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
    expect(result.structuredContent).to.deep.equal({ said: 'queued' });
    expect(seen.map(({ progress, total }) => [progress, total])).to.deep.equal([
      [0, 2],
      [1, 2],
      [2, 2],
    ]);
    const runId = (result._meta as Record<string, string>)['agentic-runtime/run_id'] ?? '';
    expect(svc.runtime.isActive(runId)).to.equal(false);
    const detail = await call(svc.url, 'GET', `/api/runs/${runId}`);
    expect(detail.status).to.equal(200);
    expect(detail.body).to.deep.include({ run_id: runId, status: 'success' });
  });

  it('cancelling the call cancels the run on the worker', async () => {
    const controller = new AbortController();
    let runId = '';
    const pending = client.callTool(
      { name: 'slow', arguments: {} },
      {
        signal: controller.signal,
        onprogress: (progress) => {
          runId = /^run (\S+) started$/.exec(progress.message ?? '')?.[1] ?? '';
          controller.abort(new Error('user cancelled'));
        },
      },
    );
    const rejected = await pending.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejected).to.be.instanceOf(Error);
    expect(runId).not.to.equal('');
    // The run's end comes back through Redis into the history index: asked until it is there.
    let record: { status?: string; error?: string } = {};
    const deadline = Date.now() + 60_000;
    while (record.status !== 'failed' && Date.now() < deadline) {
      const res = await call(svc.url, 'GET', `/api/runs/${runId}`);
      if (res.status === 200) record = res.body as typeof record;
      if (record.status !== 'failed') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(record.status).to.equal('failed');
    expect(record.error).to.match(/cancel/);
  });
});
