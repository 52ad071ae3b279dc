import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { TestService } from '../http/harness.js';
import {
  launchBrowser,
  openConsole,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
} from './harness.js';

/** A tool call that needs approval (file_write, high risk) under AGENTIC_APPROVAL_PROVIDER=http. */
const APPROVE_WRITE = `name: approve_write
steps:
  - name: write
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: out.txt, content: approved } }
`;

/** A question whose schema has an integer, an enum and an object: the generated form's fields. */
const ASK_NUMBERS = `name: ask_numbers
outputs:
  count: { from: '\${steps.ask.outputs.count}' }
steps:
  - name: ask
    human:
      prompt: How many copies, in which colour?
      schema:
        type: object
        required: [count, colour]
        additionalProperties: false
        properties:
          count: { type: integer, minimum: 1, description: Copies to print. }
          colour: { enum: [red, green, blue] }
          shipping:
            type: object
            properties:
              express: { type: boolean }
              note: { type: string }
`;

/** Fails at its second step until the workflow file is fixed (the rerun test's fault). */
const FLAKY = (agent: string) => `name: flaky_report
steps:
  - name: prepare
    agent: tier0_echo
    inputs: { text: ready }
  - name: report
    agent: ${agent}
    depends_on: [prepare]
    inputs: { message: the report service is down, text: done }
`;

async function startRun(svc: TestService, workflow: string, input?: unknown): Promise<string> {
  const res = await fetch(`${svc.url}/api/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow, ...(input === undefined ? {} : { input_data: input }) }),
  });
  const body = (await res.json()) as { run_id: string };
  expect(res.status, JSON.stringify(body)).to.equal(200);
  return body.run_id;
}

/** Resolves once `runId` waits for a person (listed by GET /api/approvals). */
async function untilWaiting(svc: TestService, runId: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${svc.url}/api/approvals`);
    const body = (await res.json()) as { approvals: { run_id: string }[] };
    if (body.approvals.some((a) => a.run_id === runId)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Presses Tab until the element with `id` has the focus (keyboard only), at most 60 times. */
async function tabTo(page: Page, id: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate('document.activeElement && document.activeElement.id')) === id) return;
  }
  throw new Error(`Tab never reached #${id}`);
}

describe('console: Inbox, Runs, Datasets and Models pages (browser)', function () {
  this.timeout(120_000);
  let browser: ConsoleBrowser;
  let svc: TestService;
  let files: string;
  let tab: ConsolePage | undefined;
  before(async () => {
    files = await mkdtemp(join(tmpdir(), 'agentic-console-files-'));
    browser = await launchBrowser();
    svc = await startConsoleService({
      env: { AGENTIC_APPROVAL_PROVIDER: 'http', AGENTIC_FILE_BASE_DIR: files },
    });
    await writeFile(join(svc.workflowsDir, 'approve_write.yaml'), APPROVE_WRITE);
    await writeFile(join(svc.workflowsDir, 'ask_numbers.yaml'), ASK_NUMBERS);
    await writeFile(join(svc.workflowsDir, 'flaky_report.yaml'), FLAKY('tier0_fail'));
  });
  after(async () => {
    await browser?.close();
    await svc?.dispose();
    await rm(files, { recursive: true, force: true });
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

  for (const [path, heading] of [
    ['/#/inbox', 'Inbox'],
    ['/#/runs', 'Runs'],
    ['/#/datasets', 'Datasets and evaluations'],
    ['/#/models', 'Models'],
  ] as const) {
    it(`${path} loads with no console error and no failed request`, async () => {
      tab = await openConsole(browser, svc, path);
      await tab.page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await tab.page
        .getByRole('link', { name: heading.split(' ')[0] as string })
        .first()
        .waitFor();
      // Let its first requests (and a poll) answer before the page is judged.
      await tab.page.waitForLoadState('networkidle');
    });
  }

  it('Inbox: a tool call waiting for approval is approved in place and the run succeeds', async () => {
    tab = await openConsole(browser, svc, '/#/inbox');
    const runId = await startRun(svc, 'approve_write');
    const item = tab.page.getByRole('article', { name: 'Tool call: file_write' });
    await item.waitFor();
    expect(await item.getByLabel('Arguments of file_write').count()).to.be.at.most(1);
    await item.getByLabel('Reason (optional)').fill('looks fine');
    await item.getByRole('button', { name: 'Approve' }).click();
    await tab.page.getByText('Approved file_write.').waitFor();
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(await readFile(join(files, 'out.txt'), 'utf8')).to.equal('approved');
    await item.waitFor({ state: 'detached' });
  });

  it("Inbox: a question's generated form shows the API's 422, then its answer ends the run", async () => {
    const runId = await startRun(svc, 'ask_numbers');
    await untilWaiting(svc, runId);
    tab = await openConsole(browser, svc, '/#/inbox');
    const item = tab.page.getByRole('article', { name: 'Question: ask' });
    await item.getByText('How many copies, in which colour?').waitFor();
    // The fields generated from the schema: integer, enum, an object of a boolean and a string.
    await item.getByLabel('colour (required)').selectOption('green');
    await item.getByLabel('express').check();
    await item.getByLabel('note').fill('by Friday');
    // count left empty: the service answers 422 naming it, shown in place.
    tab.expectResponse(422, /\/api\/approvals\//);
    await item.getByRole('button', { name: 'Send answer' }).click();
    const alert = item.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent())
      .to.include('422')
      .and.include('count');
    await item.getByLabel('count (required)').fill('3');
    await item.getByRole('button', { name: 'Send answer' }).click();
    await tab.page.getByText('Answered ask.').waitFor();
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.steps[0]?.output).to.deep.equal({
      count: 3,
      colour: 'green',
      shipping: { express: true, note: 'by Friday' },
    });
  });

  it('Inbox by keyboard only: human_review answered with Tab, Space and Enter', async () => {
    const runId = await startRun(svc, 'human_review');
    await untilWaiting(svc, runId);
    tab = await openConsole(browser, svc, '/#/inbox');
    const item = tab.page.getByRole('article', { name: 'Question: sign_off' });
    await item.waitFor();
    const callId = (await item.getAttribute('aria-labelledby'))?.replace(/^inbox-/, '') ?? '';
    await tabTo(tab.page, `answer-${callId}-approved`);
    await tab.page.keyboard.press('Space');
    await tabTo(tab.page, `answer-${callId}-note`);
    await tab.page.keyboard.type('ship it');
    await tab.page.keyboard.press('Enter');
    await tab.page.getByText('Answered sign_off.').waitFor();
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.final_output).to.deep.include({ approved: true, note: 'ship it' });
  });

  it('Runs: the explain view of a run waiting for a person, linked to the Inbox', async () => {
    const runId = await startRun(svc, 'human_review');
    await untilWaiting(svc, runId);
    tab = await openConsole(browser, svc, `/#/runs/${runId}`);
    const explain = tab.page.getByRole('region', { name: 'Why is it not moving?' });
    await explain.getByText('sign_off').first().waitFor();
    expect(await explain.textContent()).to.include('input');
    await explain.getByRole('link', { name: 'Answer in the Inbox' }).click();
    await tab.page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    // Leave nothing waiting: deny by answering with the default (not approved).
    const item = tab.page.getByRole('article', { name: 'Question: sign_off' });
    await item.getByRole('button', { name: 'Send answer' }).click();
    expect((await svc.finished(runId)).status).to.equal('success');
  });

  it('Runs: a failed step rerun from the run page; the new run opens and succeeds', async () => {
    const failedId = await startRun(svc, 'flaky_report');
    const failed = await svc.finished(failedId);
    expect(failed.status).to.equal('failed');
    tab = await openConsole(browser, svc, `/#/runs/${failedId}`);
    await tab.page.getByText('the report service is down').first().waitFor();
    // The explain view of an ended run: its end and failed step.
    await tab.page.getByRole('button', { name: 'Explain this run' }).click();
    const explain = tab.page.getByRole('region', { name: 'Why is it not moving?' });
    await explain.getByText('Failed step:').waitFor();
    expect(await explain.textContent()).to.include('report');
    // The fault is fixed in the workflow; rerun from the failed step (selected by default).
    await writeFile(join(svc.workflowsDir, 'flaky_report.yaml'), FLAKY('tier0_echo'));
    expect(await tab.page.getByLabel('From step').inputValue()).to.equal('report');
    await tab.page.getByRole('button', { name: 'Rerun from report' }).click();
    await tab.page.waitForURL(
      (url) => !url.hash.endsWith(failedId) && url.hash.startsWith('#/runs/'),
    );
    const newId = decodeURIComponent(new URL(tab.page.url()).hash.replace('#/runs/', ''));
    expect(newId).to.not.equal(failedId);
    const fork = await svc.finished(newId);
    expect(fork.status).to.equal('success');
    expect(fork.extra.forked_from).to.deep.equal({ run_id: failedId, step: 'report' });
    await tab.page.getByRole('link', { name: `${failedId} from report` }).waitFor();
    await tab.page.getByText('success').first().waitFor();
    await writeFile(join(svc.workflowsDir, 'flaky_report.yaml'), FLAKY('tier0_fail'));
  });

  it('Runs: the history filters by status and workflow', async () => {
    const failedId = await startRun(svc, 'flaky_report');
    await svc.finished(failedId);
    const okId = await startRun(svc, 'test_deterministic', { text: 'hi' });
    await svc.finished(okId);
    tab = await openConsole(browser, svc, '/#/runs');
    const history = tab.page.getByRole('region', { name: 'Run history' });
    await history.getByRole('link', { name: okId }).waitFor();
    await history.getByRole('link', { name: failedId }).waitFor();

    await tab.page.getByLabel('Status').selectOption('failed');
    await tab.page.getByRole('button', { name: 'Apply filters' }).click();
    await history.getByRole('link', { name: okId }).waitFor({ state: 'detached' });
    const failedRows = await history.locator('tbody tr').allTextContents();
    expect(failedRows.length).to.be.above(0);
    for (const row of failedRows) expect(row).to.include('failed');

    await tab.page.getByLabel('Status').selectOption('');
    await tab.page.getByLabel('Workflow').selectOption('test_deterministic');
    await tab.page.getByRole('button', { name: 'Apply filters' }).click();
    await history.getByRole('link', { name: failedId }).waitFor({ state: 'detached' });
    for (const row of await history.locator('tbody tr').allTextContents()) {
      expect(row).to.include('test_deterministic');
    }
    // A start-time range after every run: none matches.
    await tab.page.getByLabel('Started from').fill('2999-01-01T00:00:00');
    await tab.page.getByRole('button', { name: 'Apply filters' }).click();
    await tab.page.getByText('No run matches.').waitFor();
  });

  it('Datasets: lists a dataset, its samples, and runs a batch evaluation to its aggregate', async () => {
    tab = await openConsole(browser, svc, '/#/datasets');
    const datasets = tab.page.getByRole('list', { name: 'Datasets' });
    const link = datasets
      .getByRole('link')
      .filter({ hasText: /question/i })
      .first();
    await link.click();
    await tab.page.getByRole('region', { name: 'Samples' }).locator('tbody tr').first().waitFor();
    const start = tab.page.getByRole('button', { name: 'Start evaluation' });
    // question_answering is compatible with test_deterministic: no model is needed to score it.
    expect(await tab.page.getByLabel('Workflow', { exact: true }).inputValue()).to.not.equal('');
    await tab.page.getByLabel('Samples (the first)').fill('2');
    await start.click();
    await tab.page.getByText('2 of 2 samples done').waitFor({ timeout: 60_000 });
    await tab.page.getByRole('heading', { name: /complete/ }).waitFor();
    const items = tab.page.getByRole('region', { name: 'Batch items' });
    expect(await items.locator('tbody tr').count()).to.equal(2);
    expect(await tab.page.getByText('Scored').count()).to.equal(1);
  });

  it('Models: the five tier chains with their circuits', async () => {
    tab = await openConsole(browser, svc, '/#/models');
    const chains = tab.page.getByRole('list', { name: 'Tier chains' });
    await chains.getByRole('heading', { name: 'Tier 5' }).waitFor();
    for (const tier of ['1', '2', '3', '4', '5']) {
      const chain = tab.page.getByRole('list', { name: `Tier ${tier} chain` });
      expect(await chain.locator('li').count(), `tier ${tier}`).to.be.above(0);
    }
    expect(await chains.textContent()).to.match(/closed|open/);
    await tab.page.getByRole('region', { name: 'Providers' }).locator('tbody tr').first().waitFor();
    await tab.page.waitForLoadState('networkidle');
  });

  it('phone-sized screen (390x844): the pages do not scroll sideways', async () => {
    const runId = await startRun(svc, 'test_deterministic', { text: 'phone' });
    await svc.finished(runId);
    tab = await openConsole(browser, svc, '/#/runs');
    await tab.page.setViewportSize({ width: 390, height: 844 });
    for (const path of ['#/runs', `#/runs/${runId}`, '#/inbox', '#/datasets', '#/models']) {
      await tab.page.goto(`${svc.url}/${path}`);
      await tab.page.getByRole('heading', { level: 1 }).waitFor();
      await tab.page.waitForLoadState('networkidle');
      const overflow = await tab.page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow, path).to.be.at.most(0);
    }
  });
});
