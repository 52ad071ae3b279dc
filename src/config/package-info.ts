import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this module that holds our package.json. */
export const packageRoot: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** The version from package.json, read once. */
export const packageVersion: string = (
  JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }
).version;

function findPackageRoot(start: string): string {
  let dir = start;
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'agentic-runtime') return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('agentic-runtime package.json not found');
    dir = parent;
  }
}

/**
 * The shipped agent catalogue (role personas). It lives outside the workflows directory so
 * that no workflow name can shadow it and a custom workflows directory keeps the personas.
 */
export function shippedAgentCatalogue(): string {
  return join(packageRoot, 'agents', 'catalogue.yaml');
}

/** The shipped tier fallback chains (`AGENTIC_MODELS_FILE` replaces them). */
export function shippedModelsFile(): string {
  return join(packageRoot, 'agents', 'models.yaml');
}

/** The shipped price table (`AGENTIC_PRICES_FILE` replaces it). */
export function shippedPricesFile(): string {
  return join(packageRoot, 'agents', 'prices.yaml');
}
