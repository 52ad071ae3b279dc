/**
 * Temp files left in the runs directory by a process killed mid-write (`.<name>.<token>-<n>.tmp`,
 * empty or partial: the rename never happened, so no run file is affected). Nothing reads them;
 * start-up removes those of processes that are gone (their token, src/files/process-token.ts,
 * has no live owner file) so they do not pile up across crashes, never those of a live process
 * sharing the directory. A temp file without a token (another writer) is removed once a minute old.
 */
import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { OWNER_FILE, ownerAlive, type OwnerInfo } from './owner.js';
import { TEMP_FILE_TOKEN, tokenOfOwner } from '../files/process-token.js';

/** Names of the atomic writers' temp files (`.<target>.<unique>.tmp`). */
export const TEMP_FILE = /^\..+\.tmp$/;
/** Temp files without a process token are removed only when this old. */
const ANONYMOUS_TEMP_AGE_MS = 60_000;

/** Whether the owner file `name` in `dir` names a live owner (file times are wall-clock). */
export async function ownerFileAlive(dir: string, name: string): Promise<boolean> {
  const path = join(dir, name);
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    return ownerAlive(JSON.parse(text) as OwnerInfo, info.mtimeMs, Date.now());
  } catch {
    return false;
  }
}

async function olderThan(path: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > ms;
  } catch {
    return false;
  }
}

/**
 * Removes the temp files `names` of `dir` whose process token is not in `liveTokens`. Returns
 * the removed names.
 */
export async function removeDeadTempFiles(
  dir: string,
  names: readonly string[],
  liveTokens: ReadonlySet<string>,
): Promise<string[]> {
  const removed: string[] = [];
  for (const name of names) {
    const token = TEMP_FILE_TOKEN.exec(name)?.[1];
    const path = join(dir, name);
    const dead =
      token === undefined ? await olderThan(path, ANONYMOUS_TEMP_AGE_MS) : !liveTokens.has(token);
    if (!dead) continue;
    try {
      await unlink(path);
      removed.push(name);
    } catch (error) {
      // Its writer finished (renamed) it meanwhile: nothing left to remove.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return removed;
}

/**
 * Removes the temp files of gone processes from `dir` (see the module comment). Returns the
 * removed names; a missing directory is empty. The runtime's start-up scan does this too.
 */
export async function removeStaleTempFiles(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const live = new Set<string>();
  for (const name of entries) {
    const owner = OWNER_FILE.exec(name)?.[1];
    if (owner !== undefined && (await ownerFileAlive(dir, name))) live.add(tokenOfOwner(owner));
  }
  return removeDeadTempFiles(
    dir,
    entries.filter((name) => TEMP_FILE.test(name)),
    live,
  );
}
