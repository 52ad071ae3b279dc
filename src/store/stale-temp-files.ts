/**
 * Temp files left in the runs directory by a process killed mid-write (`.<name>.<id>.tmp`,
 * empty or partial: the rename never happened, so no run file is affected). Nothing reads them;
 * start-up removes them so they do not pile up across crashes.
 */
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Names of the atomic writers' temp files (`.<target>.<unique>.tmp`). */
const TEMP_FILE = /^\..+\.tmp$/;

/**
 * Removes the atomic writers' temp files from `dir`. Returns the removed names; a missing
 * directory is empty. Called before anything of this process writes there.
 */
export async function removeStaleTempFiles(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const removed: string[] = [];
  for (const name of entries) {
    if (!TEMP_FILE.test(name)) continue;
    try {
      await unlink(join(dir, name));
      removed.push(name);
    } catch (error) {
      // Another process finished (renamed) it meanwhile: nothing left to remove.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return removed;
}
