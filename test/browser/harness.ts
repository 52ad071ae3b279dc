/**
 * The browser suite's harness: Debian's chromium (`/usr/bin/chromium`, installed by `.ci/run`)
 * driven by playwright-core with a temp profile, against the real service (in process, on port
 * 0, no-LLM mode, a temp runs directory, the built console of `dist/console`). A page opened
 * through {@link openConsole} records every console error, page error and response ≥ 400;
 * `assertClean()` fails the test on any of them the test did not `expect`.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { packageRoot } from '../../src/config/index.js';
import { startTestService, type TestService, type TestServiceOptions } from '../http/harness.js';

/** Where `.ci/run` installs Debian's chromium; CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ConsoleBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches chromium headless with a temp profile; fails clearly when it is not installed. */
export async function launchBrowser(): Promise<ConsoleBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `chromium not found at ${CHROMIUM_PATH}: the browser tests need Debian's chromium ` +
        '(apt-get install chromium; .ci/run installs it) or CHROMIUM_PATH',
    );
  }
  const consoleIndex = join(packageRoot, 'dist', 'console', 'index.html');
  if (!existsSync(consoleIndex)) {
    throw new Error(`${consoleIndex} is missing: run npm run build first`);
  }
  const profile = await mkdtemp(join(tmpdir(), 'agentic-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** The service the console is served by: the HTTP harness's, with the console on. */
export function startConsoleService(options: TestServiceOptions = {}): Promise<TestService> {
  return startTestService({ ...options, env: { AGENTIC_CONSOLE: '1', ...options.env } });
}

export interface ConsolePage {
  page: Page;
  /** Every request and WebSocket URL the page opened (the key must never be in one). */
  readonly requestUrls: readonly string[];
  /** Allows responses of `status` whose URL matches `url` (an expected 401, 404 or 409). */
  expectResponse(status: number, url: RegExp): void;
  /** Throws listing the console errors, page errors and unexpected responses ≥ 400. */
  assertClean(): void;
  close(): Promise<void>;
}

/** Opens `path` of the service's console in a new tab, recording what goes wrong. */
export async function openConsole(
  browser: ConsoleBrowser,
  service: TestService,
  path = '/',
): Promise<ConsolePage> {
  const page = await browser.context.newPage();
  const problems: string[] = [];
  const requestUrls: string[] = [];
  const expected: { status: number; url: RegExp }[] = [];
  const failedResponses: { status: number; url: string }[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') {
      problems.push(`console error: ${message.text()} (${message.location().url})`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => requestUrls.push(request.url()));
  page.on('websocket', (socket) => requestUrls.push(socket.url()));
  page.on('response', (response) => {
    if (response.status() >= 400) {
      failedResponses.push({ status: response.status(), url: response.url() });
    }
  });
  await page.goto(`${service.url}${path}`);
  return {
    page,
    requestUrls,
    expectResponse: (status, url) => {
      expected.push({ status, url });
    },
    assertClean: () => {
      const unexpected = failedResponses
        .filter((r) => !expected.some((e) => e.status === r.status && e.url.test(r.url)))
        .map((r) => `response ${r.status}: ${r.url}`);
      // A failed response the test expected also logs "Failed to load resource" in the console.
      const errors = problems.filter(
        (problem) =>
          !(
            problem.includes('Failed to load resource') &&
            failedResponses.some(
              (r) =>
                problem.includes(`status of ${r.status}`) &&
                expected.some((e) => e.status === r.status && e.url.test(r.url)),
            )
          ),
      );
      const all = [...errors, ...unexpected];
      if (all.length > 0) throw new Error(`the page went wrong:\n${all.join('\n')}`);
    },
    close: () => page.close(),
  };
}
