import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import { startTestService, type TestService } from './harness.js';

const CONSOLE_INDEX = join(packageRoot, 'dist', 'console', 'index.html');

describe('the built-in console at / (AGENTIC_CONSOLE)', () => {
  let svc: TestService | undefined;
  before(function () {
    if (!existsSync(CONSOLE_INDEX)) {
      throw new Error(`${CONSOLE_INDEX} is missing: run npm run build first`);
    }
  });
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  it('serves the console, its hashed assets and the index for any route when no frontend is built', async () => {
    svc = await startTestService({ env: { AGENTIC_CONSOLE: '1' } });
    const index = await fetch(`${svc.url}/`);
    expect(index.status).to.equal(200);
    expect(index.headers.get('content-type')).to.match(/^text\/html/);
    const html = await index.text();
    const script = /src="(\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script, html).to.be.a('string');
    const asset = await fetch(`${svc.url}${script ?? ''}`);
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect((await fetch(`${svc.url}/runs/some-run.json`)).headers.get('content-type')).to.match(
      /^text\/html/,
    );
    const api = await fetch(`${svc.url}/api/nope`);
    expect(api.status).to.equal(404);
    expect(await api.json()).to.deep.equal({ detail: 'Not Found' });
    expect((await fetch(`${svc.url}/assets/missing.js`)).status).to.equal(404);
  });

  it('serves AGENTIC_FRONTEND_DIR instead when its index.html exists', async () => {
    svc = await startTestService({ env: { AGENTIC_CONSOLE: '1' } });
    await mkdir(join(svc.root, 'frontend'), { recursive: true });
    await writeFile(join(svc.root, 'frontend', 'index.html'), '<p>other frontend</p>');
    const index = await fetch(`${svc.url}/workflows`);
    expect(await index.text()).to.equal('<p>other frontend</p>');
  });

  it('answers a JSON 404 for unmatched paths with AGENTIC_CONSOLE=0', async () => {
    svc = await startTestService({ env: { AGENTIC_CONSOLE: '0' } });
    const res = await fetch(`${svc.url}/`);
    expect(res.status).to.equal(404);
    expect(await res.json()).to.deep.equal({ detail: 'Not Found' });
  });
});
