/**
 * The cost of model calls (issue 28 point 3) on a real service whose LLM steps call a fake
 * OpenAI server on 127.0.0.1 that reports cached tokens: the step_end events (live and replayed
 * from the run file), the run file (steps and the run's total), GET /api/runs/summary and
 * /metrics, with a price table of the test's own (AGENTIC_PRICES_FILE).
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSummary } from '../../src/generated/api/run-list-response.js';
import type { StepEndEvent } from '../../src/generated/events.js';
import type { WorkflowEvent } from '../../src/engine/types.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { openSse } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';
import { sampleValue } from './metrics-scrape.js';

const PRICES = `as_of: "2026-11-28"
models:
  "openai:gpt-priced": { input: 2.00, cached_input: 0.50, output: 8.00 }
`;

// Every call: 1,000 input tokens of which 400 cached, 200 output tokens.
// (600 × 2 + 400 × 0.5 + 200 × 8) / 1e6 = 0.003 USD
const CALL_USD = 0.003;

const workflow = (name: string, secondModel: string) => `name: ${name}
steps:
  - name: draft
    agent: tier1_analyst
    model: openai:gpt-priced
    inputs: { topic: costs }
  - name: count
    agent: tier0_echo
    inputs: { n: 1 }
  - name: review
    agent: tier1_analyst
    model: ${secondModel}
    depends_on: [draft]
    inputs: { text: "\${steps.draft.outputs.result}" }
`;

describe('cost of model calls, steps and runs (fake OpenAI server, AGENTIC_PRICES_FILE)', function () {
  this.timeout(60_000);
  let provider: FakeServer | undefined;
  let svc: TestService | undefined;
  let off: (() => void) | undefined;
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-cost-'));
  });
  afterEach(async () => {
    off?.();
    await svc?.dispose();
    await provider?.close();
    await rm(dir, { recursive: true, force: true });
    svc = provider = off = undefined;
  });

  async function start(): Promise<{ svc: TestService; events: WorkflowEvent[] }> {
    provider = await startFakeServer((req, res) => {
      if (req.method === 'GET') {
        return sendJson(res, 200, { data: [{ id: 'gpt-priced' }, { id: 'gpt-unpriced' }] });
      }
      const body = req.body as { model: string; stream?: boolean };
      const usage = { prompt: 1000, completion: 200, cached: 400 };
      if (body.stream === true) {
        return sendSse(res, openAiChunks('an answer', { model: body.model, usage }));
      }
      return sendJson(res, 200, openAiAnswer('an answer', { model: body.model, usage }));
    });
    const pricesFile = join(dir, 'prices.yaml');
    await writeFile(pricesFile, PRICES);
    const s = (svc = await startTestService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${provider.url}/v1`,
        OPENAI_API_KEY: 'sk-cost-test-0123456789abcdef',
        AGENTIC_METRICS: '1',
        AGENTIC_PRICES_FILE: pricesFile,
      },
    }));
    await writeFile(
      join(s.workflowsDir, 'cost_priced.yaml'),
      workflow('cost_priced', 'openai:gpt-priced'),
    );
    await writeFile(
      join(s.workflowsDir, 'cost_mixed.yaml'),
      workflow('cost_mixed', 'openai:gpt-unpriced'),
    );
    const events: WorkflowEvent[] = [];
    off = s.runtime.subscribe((event) => events.push(event));
    return { svc: s, events };
  }

  async function run(s: TestService, name: string): Promise<string> {
    const res = await call(s.url, 'POST', '/api/run', { workflow: name });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    const record = await s.finished(runId);
    expect(record.status, JSON.stringify(record)).to.equal('success');
    return runId;
  }

  const stepEnds = (events: readonly WorkflowEvent[], runId: string) =>
    Object.fromEntries(
      events
        .filter(
          (e): e is StepEndEvent & WorkflowEvent => e.type === 'step_end' && e.run_id === runId,
        )
        .map((e) => [e.step, { tokens_used: e.tokens_used, cost_usd: e.cost_usd }]),
    );

  it('puts each step’s cost in its step_end, the run file (steps and total), the summary and /metrics', async () => {
    const { svc: s, events } = await start();
    const runId = await run(s, 'cost_priced');

    const tokens = { input: 1000, output: 200, total: 1200, cached: 400 };
    const expected = {
      draft: { tokens_used: tokens, cost_usd: CALL_USD },
      count: { tokens_used: null, cost_usd: 0 },
      review: { tokens_used: tokens, cost_usd: CALL_USD },
    };
    expect(stepEnds(events, runId)).to.deep.equal(expected);

    // The run file, as GET /api/runs/{filename} serves it.
    const listed = (await call(s.url, 'GET', '/api/runs')).body as RunSummary[];
    const filename = listed.find((r) => r.run_id === runId)!.filename;
    const file = (await call(s.url, 'GET', `/api/runs/${filename}`)).body as {
      cost_usd: number | null;
      steps: { step_name: string; tokens_used: unknown; cost_usd: number | null }[];
    };
    expect(
      Object.fromEntries(
        file.steps.map((st) => [
          st.step_name,
          { tokens_used: st.tokens_used, cost_usd: st.cost_usd },
        ]),
      ),
    ).to.deep.equal(expected);
    expect(file.cost_usd).to.equal(2 * CALL_USD);

    // A replay from the run file carries the same costs.
    const sse = await openSse(`${s.url}/api/runs/${runId}/stream`);
    await sse.frames.done();
    expect(stepEnds(sse.events(), runId)).to.deep.equal(expected);

    const summary = (await call(s.url, 'GET', '/api/runs/summary')).body as Record<string, unknown>;
    expect(summary).to.deep.include({
      tokens_30d: 2400,
      cost_30d: 2 * CALL_USD,
      cost_30d_unpriced_runs: 0,
    });

    const metrics = (await call(s.url, 'GET', '/metrics')).text;
    expect(
      sampleValue(metrics, 'agentic_llm_cost_usd_total', {
        provider: 'openai',
        model: 'openai:gpt-priced',
      }),
    ).to.be.closeTo(2 * CALL_USD, 1e-12);
    expect(
      sampleValue(metrics, 'agentic_llm_unpriced_calls_total', {
        provider: 'openai',
        model: 'openai:gpt-priced',
      }),
    ).to.equal(0);
  });

  it('a call on a model without a price makes its step’s and its run’s cost null, never a guess', async () => {
    const { svc: s, events } = await start();
    const priced = await run(s, 'cost_priced');
    const mixed = await run(s, 'cost_mixed');

    const ends = stepEnds(events, mixed);
    expect(ends.draft!.cost_usd).to.equal(CALL_USD);
    expect(ends.review).to.deep.equal({
      tokens_used: { input: 1000, output: 200, total: 1200, cached: 400 },
      cost_usd: null,
    });

    const listed = (await call(s.url, 'GET', '/api/runs')).body as RunSummary[];
    const fileOf = async (runId: string) =>
      (await call(s.url, 'GET', `/api/runs/${listed.find((r) => r.run_id === runId)!.filename}`))
        .body as {
        cost_usd: number | null;
      };
    expect((await fileOf(mixed)).cost_usd).to.equal(null);
    expect((await fileOf(priced)).cost_usd).to.equal(2 * CALL_USD);

    // The summary adds the known costs and counts the runs whose cost is unknown.
    const summary = (await call(s.url, 'GET', '/api/runs/summary')).body as Record<string, unknown>;
    expect(summary).to.deep.include({
      tokens_30d: 4800,
      cost_30d: 2 * CALL_USD,
      cost_30d_unpriced_runs: 1,
    });

    const metrics = (await call(s.url, 'GET', '/metrics')).text;
    const labels = { provider: 'openai', model: 'openai:gpt-unpriced' };
    expect(sampleValue(metrics, 'agentic_llm_unpriced_calls_total', labels)).to.equal(1);
    expect(sampleValue(metrics, 'agentic_llm_cost_usd_total', labels)).to.equal(0);
    expect(
      sampleValue(metrics, 'agentic_llm_cost_usd_total', {
        provider: 'openai',
        model: 'openai:gpt-priced',
      }),
    ).to.be.closeTo(3 * CALL_USD, 1e-12);
  });

  it('stops the service at start-up with an error naming the price file and the key', async () => {
    const file = join(dir, 'prices.yaml');
    await writeFile(file, 'models:\n  "openai:gpt-x": { input: "two", output: 1 }\n');
    let message = '';
    try {
      svc = await startTestService({ env: { AGENTIC_NO_LLM: '0', AGENTIC_PRICES_FILE: file } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.equal(`price table ${file}: models.openai:gpt-x.input: must be number`);
  });
});
