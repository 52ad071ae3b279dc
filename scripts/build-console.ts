// Builds the web console (console/) into dist/console: index.html plus hashed /assets/*.js and
// *.css, bundled and minified by esbuild, no CDN. Prints the gzipped size of what a browser loads.
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'console');
const assetsDir = join(outDir, 'assets');
/** Issue 29: the built console stays small. */
const GZIP_BUDGET_BYTES = 250 * 1024;

await rm(outDir, { recursive: true, force: true });
await mkdir(assetsDir, { recursive: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: ['console/src/main.tsx'],
  outdir: assetsDir,
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: 'console/tsconfig.json',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((file) => join(root, file));
const scripts = outputs.filter((file) => file.endsWith('.js')).map((file) => basename(file));
const styles = outputs.filter((file) => file.endsWith('.css')).map((file) => basename(file));
const template = await readFile(join(root, 'console', 'index.html'), 'utf8');
const html = template
  .replace(
    '<!-- styles -->',
    styles.map((name) => `<link rel="stylesheet" href="/assets/${name}" />`).join('\n    '),
  )
  .replace(
    '<!-- scripts -->',
    scripts.map((name) => `<script type="module" src="/assets/${name}"></script>`).join('\n    '),
  );
await writeFile(join(outDir, 'index.html'), html);

let gzipped = gzipSync(html).length;
for (const file of outputs) gzipped += gzipSync(await readFile(file)).length;
const kb = (gzipped / 1024).toFixed(1);
console.log(`console: dist/console (${[...scripts, ...styles].join(', ')}), ${kb} KB gzipped`);
if (gzipped > GZIP_BUDGET_BYTES) {
  console.error(`console: over the ${GZIP_BUDGET_BYTES / 1024} KB gzipped budget`);
  process.exit(1);
}
