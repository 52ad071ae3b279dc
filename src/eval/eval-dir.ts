import { statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../config/index.js';

/**
 * The eval directory (rubrics, repository datasets, eval sets): `<workflows dir>/eval` when it
 * exists, else the package's shipped `workflows/eval`, so evaluation works with a user's own
 * workflows directory that has no rubrics of its own.
 */
export function resolveEvalDir(workflowsDir: string): string {
  const own = join(workflowsDir, 'eval');
  try {
    if (statSync(own).isDirectory()) return own;
  } catch {
    // No eval directory beside the workflows: the package's is used.
  }
  return join(packageRoot, 'workflows', 'eval');
}
