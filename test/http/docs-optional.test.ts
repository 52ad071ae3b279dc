import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import { createErrorFunnel } from '../../src/http/middleware/errors.js';
import { registerDocsRoutes, type PackageResolver } from '../../src/http/routes/docs.js';
import { createSilentLogger } from '../../src/log.js';
import { call } from './harness.js';

describe('documentation UIs are optional dependencies', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function serve(resolvePackage: PackageResolver): Promise<string> {
    const app = new Koa();
    const router = new Router();
    app.use(createErrorFunnel(createSilentLogger()));
    registerDocsRoutes(router, {
      openApiPath: join(packageRoot, 'schemas', 'openapi.json'),
      resolvePackage,
    });
    app.use(router.routes());
    const handle = app.callback();
    server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const absent: PackageResolver = (name) => {
    throw Object.assign(new Error(`Cannot find module '${name}/package.json'`), {
      code: 'MODULE_NOT_FOUND',
    });
  };

  it('answers 503 naming the package to install when a UI package is absent', async () => {
    const url = await serve(absent);
    const cases = [
      ['/docs', 'Swagger UI', 'swagger-ui-dist'],
      ['/docs/swagger-ui-bundle.js', 'Swagger UI', 'swagger-ui-dist'],
      ['/redoc', 'ReDoc', 'redoc'],
      ['/redoc/redoc.standalone.js', 'ReDoc', 'redoc'],
    ] as const;
    for (const [path, what, name] of cases) {
      const res = await call(url, 'GET', path);
      expect(res.status, path).to.equal(503);
      expect(res.body, path).to.deep.equal({
        detail: `${what} is not installed: it is an optional dependency; run \`npm install ${name}\` to serve it`,
      });
    }
    expect((await call(url, 'GET', '/openapi.json')).status).to.equal(200);
  });

  it('looks the packages up at request time, not at start-up', async () => {
    const asked: string[] = [];
    const url = await serve((name) => {
      asked.push(name);
      return absent(name);
    });
    expect(asked).to.deep.equal([]);
    await call(url, 'GET', '/redoc');
    expect(asked).to.deep.equal(['redoc']);
  });
});
