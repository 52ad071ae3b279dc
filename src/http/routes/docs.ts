/**
 * Documentation paths: `/openapi.json` (the generated `schemas/openapi.json`), `/docs` (Swagger
 * UI) and `/redoc` (ReDoc), both served from their npm packages on this host (no CDN). The pages
 * load their start-up scripts from files, so the default Content-Security-Policy (`script-src
 * 'self'`) holds.
 *
 * The two UI packages are optional dependencies (about 137 MB with their trees): an app that
 * embeds the runtime may install without them. They are looked up when a page is requested,
 * never at import, and a missing one is a 503 naming the package to install.
 */
import type Router from '@koa/router';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { DependencyError, NotFoundError } from '../../errors.js';
import { param } from '../context.js';
import { containedFile, sendFile } from '../static-file.js';

/** The optional documentation UI packages. */
export const DOCS_PACKAGES = { swagger: 'swagger-ui-dist', redoc: 'redoc' } as const;
type DocsPackage = (typeof DOCS_PACKAGES)[keyof typeof DOCS_PACKAGES];

/** Finds an installed package's directory; throws when it is not installed. */
export type PackageResolver = (name: string) => string;

const requireHere = createRequire(import.meta.url);
const resolveInstalled: PackageResolver = (name) =>
  dirname(requireHere.resolve(`${name}/package.json`));

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
  /** How the UI packages are found (tests inject a failing one). @default Node's resolution */
  resolvePackage?: PackageResolver;
}

export function registerDocsRoutes(router: Router, deps: DocsRouteDeps): void {
  const openApi = readFileSync(deps.openApiPath, 'utf8');
  const resolvePackage = deps.resolvePackage ?? resolveInstalled;
  // Found once; a miss is looked up again, so installing the package needs no restart.
  const found = new Map<DocsPackage, string>();
  const packageDir = (name: DocsPackage, what: string): string => {
    let dir = found.get(name);
    if (dir === undefined) {
      try {
        dir = resolvePackage(name);
      } catch (error) {
        throw new DependencyError(
          `${what} is not installed: it is an optional dependency; run \`npm install ${name}\` to serve it`,
          error,
        );
      }
      found.set(name, dir);
    }
    return dir;
  };
  const swaggerDir = (): string => packageDir(DOCS_PACKAGES.swagger, 'Swagger UI');
  const redocDir = (): string => join(packageDir(DOCS_PACKAGES.redoc, 'ReDoc'), 'bundles');
  const text = (path: string, type: string, body: string, needs?: () => string): void => {
    router.get(path, (ctx) => {
      needs?.();
      ctx.type = `${type}; charset=utf-8`;
      ctx.body = body;
    });
  };
  text('/openapi.json', 'application/json', openApi);
  text('/docs', 'text/html', SWAGGER_PAGE, swaggerDir);
  text('/docs/init.js', 'text/javascript', SWAGGER_INIT, swaggerDir);
  text('/redoc', 'text/html', REDOC_PAGE, redocDir);
  text('/redoc/init.js', 'text/javascript', REDOC_INIT, redocDir);
  router.get('/docs/:file', async (ctx) => {
    const file = SWAGGER_FILES.has(param(ctx, 'file'))
      ? await containedFile(swaggerDir(), param(ctx, 'file'))
      : undefined;
    if (file === undefined) throw new NotFoundError('Not Found');
    await sendFile(ctx, file, CACHE);
  });
  router.get('/redoc/redoc.standalone.js', async (ctx) => {
    const file = await containedFile(redocDir(), 'redoc.standalone.js');
    if (file === undefined) throw new NotFoundError('Not Found');
    await sendFile(ctx, file, CACHE);
  });
}
