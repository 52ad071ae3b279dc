/**
 * A budget pause of a run queued to a worker (REDIS_URL), raised on an api instance: 1 api
 * instance and 1 worker process on one redis-server, a fake OpenAI server on 127.0.0.1. The run
 * pauses at its budget on the worker; the pause is listed on the api instance, a raise below what
 * was spent is a 422, a raise is a 200 relayed to the worker holding the run, which then ends
 * `success`; a second raise is a 409 and an unknown id a 404 (docs/budgets.md).
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalsResponse } from '../../src/generated/api/approvals-response.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { startTestRedis, type TestRedis } from '../redis/redis-server.js';
import { startCluster, type Cluster } from './cluster.js';

const PAIR = [
  'name: budget_pair',
  'steps:',
  '  - {name: first, agent: tier1_writer, description: Write.}',
  '  - {name: second, agent: tier1_writer, description: Write more., depends_on: [first]}',
  '',
].join('\n');

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

const post = (url: string, body: unknown): Promise<Answer> =>
  request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Polls `check` every 50 ms until it gives a value, failing after `ms`. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('scale-out: a budget pause raised on an api instance (1 api, 1 worker, real processes)', function () {
  this.timeout(180_000);
  let redis: TestRedis;
  let provider: FakeServer;
  let root: string;
  let runsDir: string;
  let cluster: Cluster | undefined;

  before(async () => {
    redis = await startTestRedis();
    provider = await startFakeServer((incoming, res) => {
      // The model probe lists the model; every chat call spends 600 tokens.
      if (incoming.method === 'GET') return sendJson(res, 200, { data: [{ id: 'gpt-budget' }] });
      const model = (incoming.body as { model: string }).model;
      sendJson(res, 200, openAiAnswer('ok', { model, usage: { prompt: 400, completion: 200 } }));
    });
    root = await mkdtemp(join(tmpdir(), 'agentic-scale-budget-'));
    runsDir = join(root, 'runs');
    await mkdir(join(root, 'workflows'));
    await writeFile(join(root, 'workflows', 'budget_pair.yaml'), PAIR);
    cluster = await startCluster({
      redisUrl: redis.url,
      runsDir,
      workflowsDir: join(root, 'workflows'),
      apis: 1,
      workers: 1,
      env: {
        AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${provider.url}/v1`,
        OPENAI_API_KEY: 'sk-budget-test-0123456789',
        AGENTIC_MODEL_TIER_1: 'openai:gpt-budget',
        AGENTIC_BUDGET_CALL_MAX_TOKENS: '300',
      },
    });
  });
  after(async () => {
    await cluster?.stop();
    await provider.close();
    await redis.destroy();
    await rm(root, { recursive: true, force: true });
  });

  it('lists the worker’s pause on the api instance, relays the raise (422, 200, 409, 404) and the run ends success', async () => {
    const api = cluster!.apis[0]!.url;
    const started = await post(`${api}/api/run`, {
      workflow: 'budget_pair',
      run_id: 'budget-queued-1',
      budget: { max_tokens: 500 },
    });
    expect(started.status, JSON.stringify(started.body)).to.equal(200);

    const pause = await until('the budget pause listed on the api instance', async () => {
      const listed = await request(`${api}/api/approvals`);
      const approvals = (listed.body as unknown as ApprovalsResponse).approvals ?? [];
      return approvals.find((entry) => entry.run_id === 'budget-queued-1');
    });
    expect(pause).to.deep.include({ kind: 'budget', step: 'second', budget: { max_tokens: 500 } });

    const low = await post(`${api}/api/approvals/${pause.call_id}`, {
      budget: { max_tokens: 600 },
    });
    expect(low.status, JSON.stringify(low.body)).to.equal(422);
    expect(JSON.stringify(low.body.detail)).to.include('max_tokens');

    const raised = await post(`${api}/api/approvals/${pause.call_id}`, {
      budget: { max_tokens: 5000 },
    });
    expect(raised.status, JSON.stringify(raised.body)).to.equal(200);
    expect(raised.body).to.deep.include({ call_id: pause.call_id, decision: 'approve' });

    const record = await until('the run file to end', async () => {
      const name = (await readdir(runsDir)).find((entry) =>
        entry.endsWith('_budget-queued-1.json'),
      );
      if (name === undefined) return undefined;
      const read = JSON.parse(await readFile(join(runsDir, name), 'utf8')) as RunRecord;
      return read.status === 'success' || read.status === 'failed' ? read : undefined;
    });
    expect(record.status, JSON.stringify(record.error)).to.equal('success');
    expect(provider.requests.filter((entry) => entry.method === 'POST')).to.have.length(2);

    const again = await post(`${api}/api/approvals/${pause.call_id}`, {
      budget: { max_tokens: 9000 },
    });
    expect(again.status).to.equal(409);
    const unknown = await post(`${api}/api/approvals/no-such-pause`, {
      budget: { max_tokens: 9000 },
    });
    expect(unknown.status).to.equal(404);
  });
});
