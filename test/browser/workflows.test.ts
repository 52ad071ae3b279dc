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
    expect(names).to.include.members(['code_review', 'map_demo', 'test_deterministic']);
    expect(await tab.page.title()).to.equal('Workflows · agentic-runtime');
  });
});
