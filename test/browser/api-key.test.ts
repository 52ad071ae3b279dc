import { expect } from 'chai';
import type { TestService } from '../http/harness.js';
import {
  launchBrowser,
  openConsole,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
} from './harness.js';

const KEY = 'console-key-0123456789abcdef';

describe('console: the API key (browser)', function () {
  this.timeout(90_000);
  let browser: ConsoleBrowser;
  let svc: TestService;
  let tab: ConsolePage | undefined;
  before(async () => {
    browser = await launchBrowser();
    svc = await startConsoleService({ env: { AGENTIC_API_KEY: KEY } });
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

  it('asks for the key on a 401, then works with it: headers only, never in a URL', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    tab.expectResponse(401, /\/api\/workflows$/);
    const form = page.getByRole('form', { name: 'API key needed' });
    await form.waitFor();
    // A wrong key: refused again, the form says so.
    await page.getByLabel('API key', { exact: true }).fill('not-the-key');
    await page.getByRole('button', { name: 'Use key' }).click();
    await form.getByText('The service refused the key of this session.').waitFor();

    await page.getByLabel('API key', { exact: true }).fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page
      .getByRole('list', { name: 'Workflows' })
      .getByRole('link', { name: 'test_deterministic' })
      .click();
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/#\/runs\/[^/]+\/live$/);
    // The live page's events come over the WebSocket, the key offered as a subprotocol.
    await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor();
    expect(await page.locator('svg.dag [data-state="success"]').count()).to.equal(3);
    expect(await form.count()).to.equal(0);

    const sockets = tab.requestUrls.filter((url) => url.startsWith('ws'));
    expect(sockets).to.have.length(1);
    for (const url of tab.requestUrls) {
      expect(url).not.to.include(KEY);
      expect(url).not.to.include(Buffer.from(KEY).toString('base64url'));
    }
    expect(await page.evaluate(() => sessionStorage.length)).to.equal(1);
  });

  it('keeps the key for the tab: a reload asks no more', async () => {
    tab = await openConsole(browser, svc, '/');
    const { page } = tab;
    tab.expectResponse(401, /\/api\/workflows$/);
    await page.getByLabel('API key', { exact: true }).fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('list', { name: 'Workflows' }).waitFor();
    await page.reload();
    await page
      .getByRole('list', { name: 'Workflows' })
      .getByRole('link', { name: 'map_demo' })
      .waitFor();
    expect(await page.getByRole('form', { name: 'API key needed' }).count()).to.equal(0);
  });
});
