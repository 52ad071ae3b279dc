import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { packageRoot } from '../../src/config/index.js';
import type { TestService } from '../http/harness.js';
import {
  launchBrowser,
  openConsole,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
} from './harness.js';

/** The README's screenshot of a live run (issue 29), refreshed with CONSOLE_SCREENSHOT=1. */
const SCREENSHOT = join(packageRoot, 'docs', 'img', 'console-live-run.png');
const TAKE_SCREENSHOT = process.env.CONSOLE_SCREENSHOT === '1';

/** Starts `workflow` from its page's form and resolves with the run id the live page shows. */
async function startFromForm(page: Page, url: string, workflow: string): Promise<string> {
  if (!page.url().endsWith(`#/workflows/${workflow}`))
    await page.goto(`${url}/#/workflows/${workflow}`);
  await page.getByRole('button', { name: 'Start run' }).click();
  await page.waitForURL(/#\/runs\/[^/]+\/live$/);
  const match = /#\/runs\/([^/]+)\/live$/.exec(page.url());
  return decodeURIComponent(match?.[1] ?? '');
}

function stepState(page: Page, step: string) {
  return page.locator(`svg.dag [data-step="${step}"]`);
}

async function waitForState(page: Page, step: string, state: string): Promise<void> {
  await page.locator(`svg.dag [data-step="${step}"][data-state="${state}"]`).waitFor();
}

/** The pending question of a run (GET /api/approvals). */
async function pendingQuestion(svc: TestService, runId: string): Promise<string> {
  const res = await fetch(`${svc.url}/api/approvals`);
  const body = (await res.json()) as { approvals?: { call_id: string; run_id: string }[] };
  const list = Array.isArray(body)
    ? (body as { call_id: string; run_id: string }[])
    : body.approvals;
  const question = list?.find((entry) => entry.run_id === runId);
  if (question === undefined) throw new Error(`no question of ${runId}: ${JSON.stringify(body)}`);
  return question.call_id;
}

describe('console: Live run page (browser)', function () {
  this.timeout(90_000);
  let browser: ConsoleBrowser;
  let svc: TestService;
  let tab: ConsolePage | undefined;
  before(async () => {
    browser = await launchBrowser();
    svc = await startConsoleService();
  });
  after(async () => {
    await browser?.close();
    await svc?.dispose();
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

  it('watches a run started from the form to its end, each step success, its outputs one keypress away', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await page.goto(`${svc.url}/#/workflows/test_deterministic`);
    await page.getByLabel('label', { exact: true }).selectOption('demo');
    const runId = await startFromForm(page, svc.url, 'test_deterministic');
    expect(runId).to.match(/^test_deterministic-/);
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    for (const step of ['process', 'count', 'report']) await waitForState(page, step, 'success');
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.inputs).to.include({ label: 'demo' });
    // Keyboard only: focus the DAG's step and press Enter.
    await stepState(page, 'count').focus();
    await page.keyboard.press('Enter');
    const detail = page.locator('.step-detail');
    await detail.getByRole('heading', { name: 'count' }).waitFor();
    expect(await detail.locator('[data-fact="State"]').textContent()).to.equal('success');
    const outputs = await detail.getByLabel('Outputs of count').textContent();
    expect(JSON.parse(outputs ?? '')).to.deep.equal(
      record.steps.find((s) => s.step_name === 'count')?.output,
    );
    const final = await page.getByLabel('Final output').textContent();
    expect(JSON.parse(final ?? '')).to.deep.equal(record.final_output);
  });

  it('shows a waiting human step live, then its answer moving the run to its end', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await page.setViewportSize({ width: 1180, height: 760 });
    const runId = await startFromForm(page, svc.url, 'human_review');
    await waitForState(page, 'sign_off', 'awaiting input');
    await waitForState(page, 'draft', 'success');
    await waitForState(page, 'publish', 'pending');
    await page
      .getByRole('button', { name: /^sign_off/ })
      .first()
      .click();
    await page.locator('.step-detail').getByText("Waiting for a person's answer").waitFor();
    if (TAKE_SCREENSHOT) {
      await mkdir(join(packageRoot, 'docs', 'img'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: false });
    }

    const callId = await pendingQuestion(svc, runId);
    const answered = await fetch(`${svc.url}/api/approvals/${callId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ answer: { approved: true, note: 'ship it' } }),
    });
    expect(answered.status).to.equal(200);
    await waitForState(page, 'sign_off', 'success');
    await waitForState(page, 'publish', 'success');
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    expect(await page.locator('.step-detail').textContent()).to.include('answered');
  });

  it('counts a map step’s items from the events', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await startFromForm(page, svc.url, 'map_demo');
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    await waitForState(page, 'trim_each', 'success');
    expect(await stepState(page, 'trim_each').textContent()).to.include('4/4 items');
  });

  it('lists the child run of a sub-workflow step, linked to its own live page', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await startFromForm(page, svc.url, 'sub_workflow_demo');
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    await page
      .getByRole('button', { name: /^summarise/ })
      .first()
      .click();
    const child = page.locator('.step-detail').getByRole('link', { name: /-summarise-1$/ });
    await child.click();
    await page.waitForURL(/-summarise-1\/live$/);
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
  });

  it('shows a failed step with its attempts and error, and a step skipped by its condition', async () => {
    await writeFile(
      join(svc.workflowsDir, 'console_failing.yaml'),
      `name: console_failing
steps:
  - { name: first, agent: tier0_echo, inputs: { go: false } }
  - { name: gated, agent: tier0_echo, depends_on: [first], when: '\${steps.first.outputs.go}' }
  - { name: bad, agent: tier0_fail, depends_on: [first], max_attempts: 2, inputs: { message: boom } }
`,
    );
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    const runId = await startFromForm(page, svc.url, 'console_failing');
    await page.getByTestId('run-status').filter({ hasText: 'failed' }).waitFor();
    await waitForState(page, 'first', 'success');
    await waitForState(page, 'gated', 'skipped');
    await waitForState(page, 'bad', 'failed');
    expect(await stepState(page, 'bad').textContent()).to.include('attempt 2');
    await page.getByRole('button', { name: /^bad/ }).first().click();
    const detail = page.locator('.step-detail');
    expect(await detail.locator('[data-fact="error"]').textContent()).to.include('boom');
    expect(await detail.locator('[data-fact="Attempt"]').textContent()).to.equal('2');
    expect((await svc.finished(runId)).status).to.equal('failed');
  });

  it('cancels a running run: the run ends failed, cancelled', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    const runId = await startFromForm(page, svc.url, 'human_review');
    await waitForState(page, 'sign_off', 'awaiting input');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByTestId('run-status').filter({ hasText: 'failed' }).waitFor();
    const record = await svc.finished(runId);
    expect(record.status).to.equal('failed');
    expect(await page.getByRole('alert').first().textContent()).to.include('cancel');
  });
});
