/**
 * Sends one file from a directory: the name is resolved inside the directory (no `..`, NUL,
 * absolute paths or symlink escapes), only regular files are served, with a content type from
 * the extension. Used for the SPA, its `/assets/*` and the vendored documentation bundles.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import type { Context } from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** The real path of `relative` inside `dir`, or undefined when absent, not a file, or outside. */
export async function containedFile(dir: string, relative: string): Promise<string | undefined> {
  if (relative.includes('\0') || relative.split(/[\\/]/).some((part) => part === '..')) {
    return undefined;
  }
  try {
    const root = await realpath(dir);
    const real = await realpath(join(root, relative));
    if (!real.startsWith(root + sep)) return undefined;
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Serves `path` (already contained); `cache` sets Cache-Control. */
export async function sendFile(ctx: Context, path: string, cache: string): Promise<void> {
  const info = await stat(path);
  ctx.type = TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
  ctx.length = info.size;
  ctx.lastModified = info.mtime;
  ctx.set('Cache-Control', cache);
  ctx.body = ctx.method === 'HEAD' ? null : createReadStream(path);
}
