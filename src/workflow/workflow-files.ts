/**
 * The workflows directory as files, without reading them: which names can name a workflow, the
 * contained real path of one (symlinks followed, never outside the directory) and the names
 * present. Kept apart from the registry (parse, validate, compile) so that `agentic list` loads
 * neither the YAML parser nor the compiler (issue 25: start-up).
 */
import { realpathSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, extname, isAbsolute } from 'node:path';
// The module, not the security barrel: that one loads the sanitizer (issue 25: start-up).
import { resolveContainedSync } from '../security/path-safety.js';

const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;
export const YAML_EXT = /\.ya?ml$/;
/** Whether `name` can name a workflow file: `[A-Za-z0-9_.-]+`, not starting with '.'. */
export function isWorkflowName(name: string): boolean {
  return NAME_RE.test(name);
}

/**
 * The workflow name a client gave, without a trailing `.yaml`/`.yml` (`x.yaml` names the
 * workflow `x`, stored as `x.yaml`, never `x.yaml.yaml`).
 */
export function workflowNameOf(nameOrFile: string): string {
  return YAML_EXT.test(nameOrFile) ? nameOrFile.replace(YAML_EXT, '') : nameOrFile;
}

/** A file's name without its extension. */
export function stem(path: string): string {
  return basename(path, extname(path));
}

export function isErrno(error: unknown, codes: Set<string>): boolean {
  return error instanceof Error && codes.has(String((error as NodeJS.ErrnoException).code));
}

export interface WorkflowFiles {
  /** The real path of the directory, or undefined when it does not exist. */
  realRoot(): string | undefined;
  /** The real path of a workflow, or undefined when absent or outside the directory. */
  resolve(nameOrPath: string): string | undefined;
  /** Workflow names (file stems) present, sorted. */
  list(): Promise<string[]>;
}

export function workflowFiles(dir: string): WorkflowFiles {
  function realRoot(): string | undefined {
    try {
      return realpathSync(dir);
    } catch {
      return undefined;
    }
  }

  /** The real path of a regular file at `relative` inside the directory (symlinks followed). */
  function contained(root: string, relative: string): string | undefined {
    try {
      const real = realpathSync(resolveContainedSync(root, relative));
      return statSync(real).isFile() ? real : undefined;
    } catch {
      // Escapes (PathEscapeError) and missing files alike: no such workflow.
      return undefined;
    }
  }

  function resolve(nameOrPath: string): string | undefined {
    if (typeof nameOrPath !== 'string' || nameOrPath.length === 0 || nameOrPath.length > 1024)
      return undefined;
    if (nameOrPath.includes('\0') || nameOrPath.includes('\\') || isAbsolute(nameOrPath))
      return undefined;
    const segments = nameOrPath.split('/');
    // Rejects '..', '.', hidden files and empty segments ('a//b') before touching the disk.
    if (segments.some((segment) => segment === '' || segment.startsWith('.'))) return undefined;
    const root = realRoot();
    if (root === undefined) return undefined;
    if (YAML_EXT.test(nameOrPath)) {
      if (!isWorkflowName(stem(nameOrPath))) return undefined;
      return contained(root, nameOrPath);
    }
    if (segments.length !== 1 || !isWorkflowName(nameOrPath)) return undefined;
    return contained(root, `${nameOrPath}.yaml`) ?? contained(root, `${nameOrPath}.yml`);
  }

  async function list(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch (error) {
      if (isErrno(error, new Set(['ENOENT', 'ENOTDIR']))) return [];
      throw error;
    }
    const names = new Set<string>();
    for (const entry of entries) {
      if (!YAML_EXT.test(entry)) continue;
      const name = stem(entry);
      if (isWorkflowName(name) && resolve(name) !== undefined) names.add(name);
    }
    return [...names].sort();
  }

  return { realRoot, resolve, list };
}
