import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import type { TestService } from '../http/harness.js';
import {
  launchBrowser,
  openConsole,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
} from './harness.js';

/** Two LLM steps; every call spends 600 tokens, so a 500-token budget pauses before the second. */
const PAIR = `name: budget_pair
budget: {max_tokens: 500}
steps:
  - {name: first, agent: tier1_writer, description: Write.}
  - {name: second, agent: tier1_writer, description: Write more., depends_on: [first]}
`;

describe('console: a run paused at its budget, raised from the Inbox (browser, fake provider)', function () {
  this.timeout(90_000);
  let browser: ConsoleBrowser;
  let svc: TestService;
  let provider: FakeServer;
  let tab: ConsolePage | undefined;
  before(async () => {
    browser = await launchBrowser();
    provider = await startFakeServer((request, res) => {
      if (request.method === 'GET') return sendJson(res, 200, { data: [{ id: 'gpt-budget' }] });
      const model = (request.body as { model: string }).model;
      sendJson(res, 200, openAiAnswer('ok', { model, usage: { prompt: 400, completion: 200 } }));
    });
    svc = await startConsoleService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${provider.url}/v1`,
        OPENAI_API_KEY: 'sk-console-budget-0123456789',
        AGENTIC_MODEL_TIER_1: 'openai:gpt-budget',
        AGENTIC_BUDGET_CALL_MAX_TOKENS: '300',
      },
    });
    await writeFile(join(svc.workflowsDir, 'budget_pair.yaml'), PAIR);
  });
  after(async () => {
    await browser?.close();
    await svc?.dispose();
    await provider?.close();
  });
  afterEach(async () => {
    const open = tab;
    tab = undefined;
    if (open === undefined) return;
    try {
      open.assertClean();
    } finally {
      await open.close();
    }
  });

  it('shows what the run spent and its limit, raises the token limit in place, and the run succeeds', async () => {
    tab = await openConsole(browser, svc, '/#/inbox');
    const res = await fetch(`${svc.url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'budget_pair' }),
    });
    const { run_id: runId } = (await res.json()) as { run_id: string };
    expect(res.status).to.equal(200);
    const item = tab.page.getByRole('article', { name: /^Budget reached/ });
    await item.waitFor();
    const text = (await item.textContent()) ?? '';
    expect(text).to.include('600');
    expect(text).to.include('500');
    expect(text).to.include(runId);
    await item.getByLabel('New token limit').fill('5000');
    await item.getByRole('button', { name: 'Raise budget' }).click();
    await tab.page.getByText(`Raised the budget of ${runId}.`).waitFor();
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(provider.requests.filter((request) => request.method === 'POST')).to.have.length(2);
  });
});
