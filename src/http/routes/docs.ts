/**
 * Documentation paths: `/openapi.json` (the generated `schemas/openapi.json`), `/docs` (Swagger
 * UI) and `/redoc` (ReDoc), both served from their npm packages on this host (no CDN). The pages
 * load their start-up scripts from files, so the default Content-Security-Policy (`script-src
 * 'self'`) holds.
 */
import type Router from '@koa/router';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { NotFoundError } from '../../errors.js';
import { param } from '../context.js';
import { containedFile, sendFile } from '../static-file.js';

const require = createRequire(import.meta.url);
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));
const redocDir = join(dirname(require.resolve('redoc/package.json')), 'bundles');

const SWAGGER_FILES = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);
const CACHE = 'public, max-age=86400';

const SWAGGER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>agentic-runtime API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const SWAGGER_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

const REDOC_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>agentic-runtime API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>
<div id="redoc-container"></div>
<script src="/redoc/redoc.standalone.js"></script>
<script src="/redoc/init.js"></script>
</body>
</html>
`;

const REDOC_INIT = `Redoc.init('/openapi.json', {}, document.getElementById('redoc-container'));\n`;

export interface DocsRouteDeps {
  /** Path of the generated OpenAPI document. */
  openApiPath: string;
}

export function registerDocsRoutes(router: Router, deps: DocsRouteDeps): void {
  const openApi = readFileSync(deps.openApiPath, 'utf8');
  const text = (path: string, type: string, body: string): void => {
    router.get(path, (ctx) => {
      ctx.type = `${type}; charset=utf-8`;
      ctx.body = body;
    });
  };
  text('/openapi.json', 'application/json', openApi);
  text('/docs', 'text/html', SWAGGER_PAGE);
  text('/docs/init.js', 'text/javascript', SWAGGER_INIT);
  text('/redoc', 'text/html', REDOC_PAGE);
  text('/redoc/init.js', 'text/javascript', REDOC_INIT);
  router.get('/docs/:file', async (ctx) => {
    const file = SWAGGER_FILES.has(param(ctx, 'file'))
      ? await containedFile(swaggerDir, param(ctx, 'file'))
      : undefined;
    if (file === undefined) throw new NotFoundError('Not Found');
    await sendFile(ctx, file, CACHE);
  });
  router.get('/redoc/redoc.standalone.js', async (ctx) => {
    const file = await containedFile(redocDir, 'redoc.standalone.js');
    if (file === undefined) throw new NotFoundError('Not Found');
    await sendFile(ctx, file, CACHE);
  });
}
