/**
 * The last middleware (spec endpoint 26). The frontend is the first of `frontendDirs` whose
 * `index.html` exists: `AGENTIC_FRONTEND_DIR` (another compiled UI, e.g. the Python service's),
 * then the built-in console (`dist/console`, unless `AGENTIC_CONSOLE=0`). `/assets/*` serves files
 * from its `assets` and every other unmatched GET/HEAD gets its index (run pages linked as
 * `/runs/<file>.json` included). `/api/*`, `/ws/*`, `/assets/*` misses and the documentation
 * paths never fall back: they, and everything when no frontend is built, get a JSON 404.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Middleware } from 'koa';
import { NotFoundError } from '../errors.js';
import { containedFile, sendFile } from './static-file.js';
import { safeDecode } from './safe-decode.js';

const NEVER_SPA = /^\/(api|ws|docs|redoc)(\/|$)|^\/openapi\.json$/;

export function createSpaFallback(frontendDirs: readonly (string | undefined)[]): Middleware {
  const dirs = frontendDirs.filter((dir): dir is string => dir !== undefined);
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const readable = ctx.method === 'GET' || ctx.method === 'HEAD';
    // Checked per request: a frontend built after start-up is picked up without a restart.
    const frontendDir =
      readable && !NEVER_SPA.test(ctx.path)
        ? dirs.find((dir) => existsSync(join(dir, 'index.html')))
        : undefined;
    if (frontendDir !== undefined) {
      if (ctx.path.startsWith('/assets/')) {
        const relative = safeDecode(ctx.path.slice('/assets/'.length));
        const file =
          relative === undefined
            ? undefined
            : await containedFile(join(frontendDir, 'assets'), relative);
        if (file !== undefined) {
          await sendFile(ctx, file, 'public, max-age=31536000, immutable');
          return;
        }
      } else {
        await sendFile(ctx, join(frontendDir, 'index.html'), 'no-cache');
        return;
      }
    }
    throw new NotFoundError('Not Found');
  };
}
