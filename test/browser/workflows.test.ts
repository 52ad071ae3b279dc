import { expect } from 'chai';
import type { TestService } from '../http/harness.js';
import {
  launchBrowser,
  openConsole,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
} from './harness.js';

describe('console: Workflows page (browser)', function () {
  this.timeout(60_000);
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

  it('lists the shipped workflows, each linked to its page', async () => {
    tab = await openConsole(browser, svc, '/');
    const list = tab.page.getByRole('list', { name: 'Workflows' });
    await list.getByRole('link', { name: 'test_deterministic' }).waitFor();
    const names = await list.getByRole('link').allTextContents();
    expect(names).to.include.members([
      'code_review',
      'human_review',
      'map_demo',
      'sub_workflow_demo',
      'test_deterministic',
    ]);
    expect(await tab.page.title()).to.equal('Workflows · agentic-runtime');
  });

  it("draws a workflow's DAG and its inputs as a form from their types, enums and defaults", async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await page.getByRole('link', { name: 'map_demo' }).click();
    const dag = page.getByRole('group', { name: 'DAG of map_demo' });
    await dag.waitFor();
    const steps = await dag
      .locator('[data-step]')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-step')));
    expect(steps).to.have.members(['list', 'trim_each', 'count_each']);
    expect(await dag.locator('polyline.dag-edge').count()).to.equal(2);
    // An array input is a JSON field holding its default.
    const files = page.getByLabel('files *').or(page.getByLabel('files'));
    expect(JSON.parse(await files.inputValue())).to.deep.equal([
      '  README.md ',
      ' docs/limits.md',
      'src/index.ts  ',
      ' package.json ',
    ]);

    await page.goto(`${svc.url}/#/workflows/test_deterministic`);
    const label = page.getByLabel('label', { exact: true });
    await label.waitFor();
    // An enum is a choice of its values, the default chosen.
    expect(await label.evaluate((node) => node.tagName)).to.equal('SELECT');
    expect(await label.inputValue()).to.equal('smoke');
    expect(await label.locator('option').allTextContents()).to.include.members([
      'smoke',
      'demo',
      'ci',
    ]);
    expect(await page.getByLabel('text', { exact: true }).inputValue()).to.equal(
      '  Hello, agentic runtime!  ',
    );
    const adapters = await page.getByLabel('Adapter').locator('option').allTextContents();
    expect(adapters).to.include.members(['service default', 'graph', 'native']);
  });

  it('previews a dataset sample as the inputs, fills the form with it and starts a scored run', async () => {
    tab = await openConsole(browser, svc, '/#/workflows/code_review');
    const { page } = tab;
    await page.getByText('Evaluation and dataset samples').click();
    const dataset = page.getByLabel('Dataset');
    const choice = await dataset
      .locator('option', { hasText: 'Code review samples' })
      .getAttribute('value');
    await dataset.selectOption(choice ?? '');
    await page.getByLabel('Sample index').fill('0');
    await page.getByRole('button', { name: 'Preview sample' }).click();
    await page.getByText('The sample fits the workflow.').waitFor();
    await page.getByRole('button', { name: 'Use these inputs' }).click();
    // Multi-line text keeps its line breaks (a text area, not a one-line input).
    expect(await page.getByLabel('code', { exact: true }).inputValue()).to.include(
      "import os\n\ndef archive(name):\n    os.system('tar czf /backups/' + name",
    );
    expect(await page.getByLabel('focus', { exact: true }).inputValue()).to.equal('security');
    await page.getByLabel('Score the run against this sample').check();
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/#\/runs\/[^/]+\/live$/);
    const runId = decodeURIComponent(/#\/runs\/([^/]+)\/live$/.exec(page.url())?.[1] ?? '');
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    await page.getByText(/^Evaluation: score/).waitFor();
    const record = await svc.finished(runId);
    expect(record.extra?.evaluation).to.include({
      enabled: true,
      dataset_id: choice?.split('/')[1],
    });
  });

  it('is usable on a phone-sized screen: no sideways scrolling, the form within reach', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await page.setViewportSize({ width: 375, height: 740 });
    await page.goto(`${svc.url}/#/workflows/code_review`);
    await page.getByRole('group', { name: 'DAG of code_review' }).waitFor();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).to.equal(0);
    const start = await page.getByRole('button', { name: 'Start run' }).boundingBox();
    expect(start?.x).to.be.at.least(0);
    expect((start?.x ?? 0) + (start?.width ?? 0)).to.be.at.most(375);
  });

  it('is usable with the keyboard alone: Tab reaches a workflow, Enter opens it, Tab reaches Start run', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    await page.getByRole('link', { name: 'test_deterministic' }).waitFor();
    let focused = '';
    for (let i = 0; i < 40 && focused !== 'test_deterministic'; i += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
    }
    expect(focused).to.equal('test_deterministic');
    await page.keyboard.press('Enter');
    await page.getByRole('group', { name: 'DAG of test_deterministic' }).waitFor();
    for (let i = 0; i < 40 && focused !== 'Start run'; i += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
    }
    expect(focused).to.equal('Start run');
    // The focus is visible: the focused element draws an outline.
    const outline = await page.evaluate(() =>
      document.activeElement === null
        ? 'none'
        : getComputedStyle(document.activeElement).outlineStyle,
    );
    expect(outline).not.to.equal('none');
  });

  it('fails a page that logs a console error (the harness checks every page)', async () => {
    const probe = await openConsole(browser, svc, '/');
    try {
      await probe.page.evaluate(() => console.error('probe error'));
      await probe.page.waitForFunction(() => true);
      expect(() => probe.assertClean()).to.throw(/console error: probe error/);
    } finally {
      await probe.close();
    }
  });
  it('follows a hash changed while the page was starting (before the router listened)', async () => {
    const page = await browser.context.newPage();
    try {
      // The address changes just before the router starts listening, without a hashchange
      // reaching it: as when a link is followed or an address typed while the page loads.
      await page.addInitScript(() => {
        const listen = window.addEventListener.bind(window);
        let moved = false;
        window.addEventListener = ((type: string, ...rest: [EventListener]) => {
          if (type === 'hashchange' && !moved) {
            moved = true;
            history.replaceState(null, '', '#/workflows/test_deterministic');
          }
          listen(type, ...rest);
        }) as typeof window.addEventListener;
      });
      await page.goto(`${svc.url}/`);
      await page.getByRole('button', { name: 'Start run' }).waitFor({ timeout: 10_000 });
    } finally {
      await page.close();
    }
  });
});
