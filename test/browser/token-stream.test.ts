import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openAiChunks, startFakeServer, type FakeServer } from '../fixtures/llm/fake-server.js';
import type { TestService } from '../http/harness.js';
import {
  launchBrowser,
  openConsole,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
} from './harness.js';

const WORKFLOW = `name: console_stream
description: One LLM step, answered by a fake provider that streams.
steps:
  - name: answer
    agent: tier1_analyst
`;

function sse(payloads: readonly unknown[]): string {
  return payloads
    .map(
      (payload) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`,
    )
    .join('');
}

describe('console: an LLM step’s token stream (browser, fake provider)', function () {
  this.timeout(90_000);
  let browser: ConsoleBrowser;
  let svc: TestService;
  let provider: FakeServer;
  let tab: ConsolePage | undefined;
  let release: () => void = () => undefined;
  before(async () => {
    browser = await launchBrowser();
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The answer's first half is sent at once, the rest when the test has seen it on the page.
    provider = await startFakeServer(async (_request, res) => {
      const chunks = openAiChunks('The release notes read well. Ship them.', {
        model: 'gpt-console',
        parts: 6,
        usage: { prompt: 21, completion: 9 },
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(chunks.slice(0, 4)));
      await gate;
      res.end(sse(chunks.slice(4)));
    });
    svc = await startConsoleService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${provider.url}/v1`,
        OPENAI_API_KEY: 'sk-console-test-0123456789',
        AGENTIC_MODEL_TIER_1: 'openai:gpt-console',
      },
    });
    await writeFile(join(svc.workflowsDir, 'console_stream.yaml'), WORKFLOW);
  });
  after(async () => {
    release();
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

  it('shows the tokens while the step runs, then its model, tokens and output', async () => {
    tab = await openConsole(browser, svc, '/#/workflows/console_stream');
    const { page } = tab;
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/#\/runs\/[^/]+\/live$/);
    await page.locator('svg.dag [data-step="answer"][data-state="running"]').waitFor();
    await page
      .getByRole('button', { name: /^answer/ })
      .first()
      .click();
    const stream = page.getByLabel('Tokens streamed by answer');
    await stream.getByText('The release notes').waitFor();
    expect(await stream.textContent()).not.to.include('Ship them.');
    release();
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    expect(await stream.textContent()).to.equal('The release notes read well. Ship them.');
    const detail = page.locator('.step-detail');
    expect(await detail.locator('[data-fact="Model"]').textContent()).to.include('gpt-console');
    expect(await detail.locator('[data-fact="Tokens"]').textContent()).to.equal(
      '21 in, 9 out, 30 total',
    );
  });
});
