import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_OPERATIONS } from '../../src/http/api-operations.js';
import { call, startTestService, type TestService } from './harness.js';

/** `/api/runs/:run_id/stream` → `/api/runs/{run_id}/stream`. */
function openApiPath(routerPath: string): string {
  return routerPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

describe('HTTP documentation, OpenAPI and SPA fallback', () => {
  let svc: TestService;
  beforeEach(async () => {
    // Metrics on, so /metrics is served and checked against the document like every route.
    svc = await startTestService({ env: { AGENTIC_METRICS: '1' } });
  });
  afterEach(async () => {
    await svc.dispose();
  });

  it('GET /openapi.json is OpenAPI 3.1 and describes every router path and method', async () => {
    const res = await call(svc.url, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    const doc = res.body as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).to.equal('3.1.0');
    const assetRoutes = new Set([
      '/docs/init.js',
      '/docs/:file',
      '/redoc/init.js',
      '/redoc/redoc.standalone.js',
    ]);
    const routes = svc.app.router.stack.filter((layer) => !assetRoutes.has(String(layer.path)));
    expect(routes.length).to.be.greaterThan(15);
    for (const layer of routes) {
      const path = openApiPath(String(layer.path));
      expect(doc.paths, path).to.have.property(path);
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        const operation = doc.paths[path]?.[method.toLowerCase()] as
          { responses: Record<string, unknown>; requestBody?: unknown } | undefined;
        expect(operation, `${method} ${path}`).to.be.an('object');
        expect(Object.keys(operation?.responses ?? {})).to.not.be.empty;
        if (method === 'POST' || method === 'PUT') {
          // Actions on a run take no body.
          if (!path.endsWith('/cancel') && !path.endsWith('/resume'))
            expect(operation?.requestBody, `${method} ${path}`).to.be.an('object');
        }
      }
    }
    // and nothing documented that is not served (the WebSocket route lives on the upgrade hub,
    // /mcp is middleware in front of the body parser: test/http/mcp-server.test.ts)
    const served = new Set(routes.map((l) => openApiPath(String(l.path))));
    for (const op of API_OPERATIONS) {
      if (op.path.startsWith('/ws/') || op.path === '/mcp') continue;
      expect(served, op.path).to.include(op.path);
    }
  });

  it('every schema reference in the document resolves', async () => {
    const doc = (await call(svc.url, 'GET', '/openapi.json')).body as {
      components: { schemas: Record<string, unknown> };
    };
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs).to.not.be.empty;
    for (const ref of refs) {
      const name = /#\/components\/schemas\/([^"]+)"/.exec(ref)?.[1];
      expect(name, ref).to.be.a('string');
      expect(doc.components.schemas, ref).to.have.property(name as string);
    }
  });

  it('GET /docs and /redoc serve pages whose scripts are served locally', async () => {
    for (const [page, assets] of [
      ['/docs', ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js']],
      ['/redoc', ['/redoc/redoc.standalone.js', '/redoc/init.js']],
    ] as const) {
      const res = await call(svc.url, 'GET', page);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.text).not.to.match(/https?:\/\//);
      for (const asset of assets) {
        expect(res.text).to.include(asset);
        const file = await fetch(svc.url + asset);
        expect(file.status, asset).to.equal(200);
        expect((await file.arrayBuffer()).byteLength, asset).to.be.greaterThan(30);
      }
    }
    const other = await call(svc.url, 'GET', '/docs/package.json');
    expect(other.status).to.equal(404);
  });

  it('without a built frontend, unmatched paths answer JSON 404', async () => {
    const res = await call(svc.url, 'GET', '/some/page');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ detail: 'Not Found' });
  });

  it('with a built frontend: index for unmatched GETs and run links, /assets/*, JSON 404 for /api', async () => {
    const frontend = join(svc.root, 'frontend');
    await mkdir(join(frontend, 'assets'), { recursive: true });
    await writeFile(join(frontend, 'index.html'), '<!doctype html><title>app</title>');
    await writeFile(join(frontend, 'assets', 'app.js'), 'console.log(1)');
    await writeFile(join(svc.root, 'outside.js'), 'secret');
    for (const path of [
      '/',
      '/runs',
      '/runs/20250101T000000000Z_x_y.json',
      '/workflows/test/edit',
    ]) {
      const res = await call(svc.url, 'GET', path);
      expect(res.status, path).to.equal(200);
      expect(res.text, path).to.equal('<!doctype html><title>app</title>');
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
    }
    const asset = await call(svc.url, 'GET', '/assets/app.js');
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('content-type')).to.match(/javascript/);
    for (const path of [
      '/assets/missing.js',
      '/assets/..%2F..%2Foutside.js',
      '/api/unknown',
      '/api/runs/x/y/z',
      '/ws/other',
    ]) {
      const res = await call(svc.url, 'GET', path);
      expect(res.status, path).to.equal(404);
      expect(res.body, path).to.deep.equal({ detail: 'Not Found' });
    }
    const post = await call(svc.url, 'POST', '/somewhere', {});
    expect(post.status).to.equal(404);
  });
});
