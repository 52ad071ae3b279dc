import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { ERROR_CODES, NotFoundError } from '../errors.js';

/**
 * A user-supplied path that would leave its base directory, or a name that is not a plain
 * file name. A 404: the spec answers run-file traversal with "not found", and saying more
 * would help an attacker map the disk.
 */
export class PathEscapeError extends NotFoundError {
  readonly reason: string;
  constructor(reason: string) {
    super('Not found', ERROR_CODES.NOT_FOUND);
    this.name = 'PathEscapeError';
    this.reason = reason;
  }
}

/** Run ids: 1 to 128 characters from `a-z A-Z 0-9 _ -` (spec, Limits). */
export function isSafeRunId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,128}$/.test(id);
}

/**
 * Returns `name` when it is one plain file-name component: non-empty, at most 255 UTF-8
 * bytes, no `/`, `\`, NUL or control characters, not `.`/`..`, not starting with `-`, and
 * unchanged by NFKC normalization (so full-width `．．` or `／` tricks are refused).
 * Throws {@link PathEscapeError} otherwise.
 */
export function safeFileName(name: string): string {
  const problem = fileNameProblem(name);
  if (problem !== undefined) throw new PathEscapeError(problem);
  return name;
}

function fileNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'empty name';
  if (Buffer.byteLength(name, 'utf8') > 255) return 'name too long';
  if (name === '.' || name === '..') return 'dot segment';
  if (/[/\\]/.test(name) || hasControlCharacter(name)) return 'separator or control character';
  if (name.startsWith('-')) return 'leading dash';
  if (name.normalize('NFKC') !== name) return 'not in normalized form';
  return undefined;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Lexical checks shared by both resolvers; returns the lexically resolved path. */
function lexicalResolve(base: string, userPath: string): string {
  if (userPath.length === 0) throw new PathEscapeError('empty path');
  if (userPath.includes('\0')) throw new PathEscapeError('NUL byte');
  if (isAbsolute(userPath) || /^[A-Za-z]:/.test(userPath) || userPath.startsWith('\\')) {
    throw new PathEscapeError('absolute path');
  }
  if (userPath.normalize('NFKC') !== userPath) throw new PathEscapeError('not normalized');
  const parts = userPath.split(/[/\\]/);
  if (parts.some((part) => part === '..')) throw new PathEscapeError('parent segment');
  if (userPath.includes('\\')) throw new PathEscapeError('backslash');
  const target = resolve(base, userPath);
  if (!isInside(resolve(base), target)) throw new PathEscapeError('outside base');
  return target;
}

function isInside(base: string, target: string): boolean {
  const rel = relative(base, target);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves `userPath` inside `base` and proves it stays there: refuses `..` segments,
 * absolute paths, NUL bytes, backslashes and non-normalized text, then follows symlinks
 * (`realpath` of the path, or of its deepest existing ancestor when it does not exist yet)
 * and checks the real location is still under the real base. Returns the absolute path.
 */
export function resolveContained(base: string, userPath: string): Promise<string> {
  // realpath of local paths is a few microseconds: one synchronous implementation serves both.
  return new Promise((resolvePromise) => resolvePromise(resolveContainedSync(base, userPath)));
}

/** Synchronous {@link resolveContained}. */
export function resolveContainedSync(base: string, userPath: string): string {
  const target = lexicalResolve(base, userPath);
  const realBase = realpathSync(base);
  if (!isInside(realBase, realpathOfExisting(target))) throw new PathEscapeError('symlink escape');
  return target;
}

/** The real location of `target`, or of its deepest existing ancestor joined with the rest. */
function realpathOfExisting(target: string): string {
  let current = target;
  let rest = '';
  for (;;) {
    try {
      return resolve(realpathSync(current), rest);
    } catch (error) {
      if (!isMissing(error)) throw error;
      const parent = dirname(current);
      if (parent === current) throw error;
      rest = rest === '' ? relative(parent, current) : `${relative(parent, current)}${sep}${rest}`;
      current = parent;
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Resolves a file-tool path under AGENTIC_FILE_BASE_DIR; refuses every file operation when
 * the base directory is not configured (spec, Safety controls 2).
 */
export async function resolveFileToolPath(
  fileBaseDir: string | undefined,
  userPath: string,
): Promise<string> {
  return resolveContained(fileToolBase(fileBaseDir), userPath);
}

/** Synchronous {@link resolveFileToolPath}. */
export function resolveFileToolPathSync(fileBaseDir: string | undefined, userPath: string): string {
  return resolveContainedSync(fileToolBase(fileBaseDir), userPath);
}

function fileToolBase(fileBaseDir: string | undefined): string {
  if (fileBaseDir === undefined) {
    throw new PathEscapeError('AGENTIC_FILE_BASE_DIR is not set: file operations are disabled');
  }
  return fileBaseDir;
}
