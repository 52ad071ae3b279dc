import { statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { packageRoot } from './package-info.js';

/** Where the workflows directory came from (ARCHITECTURE §9, docs/workflow-format.md). */
export const WORKFLOWS_SOURCES = {
  /** `AGENTIC_WORKFLOWS_DIR` or the `workflowsDir` option: used as given, writable. */
  CONFIGURED: 'configured',
  /** `./workflows` of the working directory, which exists: writable. */
  WORKING_DIRECTORY: 'working_directory',
  /** The package's shipped `workflows/`: read-only (a reinstall would wipe what is saved there). */
  PACKAGE: 'package',
} as const;
export type WorkflowsSource = (typeof WORKFLOWS_SOURCES)[keyof typeof WORKFLOWS_SOURCES];

export interface WorkflowsLocation {
  /** Absolute path of the workflows directory. */
  dir: string;
  source: WorkflowsSource;
  /**
   * Why saving workflows is refused, or undefined when the directory is writable. Set only for
   * the package's shipped directory.
   */
  readOnlyReason: string | undefined;
}

/** Message of a save into the shipped (read-only) workflows directory. */
export const SHIPPED_WORKFLOWS_READ_ONLY =
  "the workflows directory is the package's shipped, read-only one: set AGENTIC_WORKFLOWS_DIR (or --workflows-dir) to a directory of your own, or create ./workflows in the working directory";

/** The package's own workflows directory. */
export function shippedWorkflowsDir(): string {
  return join(packageRoot, 'workflows');
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/**
 * The workflows directory: the configured one when given (relative to `cwd`), else
 * `./workflows` of `cwd` when it is a directory, else the package's shipped workflows,
 * read-only. When `cwd/workflows` is the package's own directory (running inside a clone) it
 * is writable like any working-directory folder.
 */
export function resolveWorkflowsLocation(
  configured: string | undefined,
  cwd: string = process.cwd(),
): WorkflowsLocation {
  if (configured !== undefined && configured !== '') {
    const dir = isAbsolute(configured) ? configured : resolve(cwd, configured);
    return { dir, source: WORKFLOWS_SOURCES.CONFIGURED, readOnlyReason: undefined };
  }
  const local = resolve(cwd, 'workflows');
  if (isDirectory(local)) {
    return { dir: local, source: WORKFLOWS_SOURCES.WORKING_DIRECTORY, readOnlyReason: undefined };
  }
  return {
    dir: shippedWorkflowsDir(),
    source: WORKFLOWS_SOURCES.PACKAGE,
    readOnlyReason: SHIPPED_WORKFLOWS_READ_ONLY,
  };
}
