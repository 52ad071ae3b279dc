/**
 * Durable file writes every layer may use (src/files sits below the domain folders): the run
 * files and journals of src/store, the workflow files a `PUT` writes (src/workflow/registry.ts).
 */
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PROCESS_TOKEN } from './process-token.js';

/**
 * Temp names are unique per write: the process token (two processes writing the same target
 * never collide, and start-up recovery knows whose temp file it is) and a counter (no random
 * bytes drawn per write).
 */
let tempCounter = 0;

/**
 * Writes `data` to `path` atomically: a temp file in the same directory, then renamed
 * over the target. A reader sees the old content or the new one, never a partial file, even if
 * the process dies mid-write. The temp file is fsynced before the rename (a crash or power loss
 * never leaves an empty file under the target's name); `sync: false` skips that for files that
 * can be rebuilt.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { sync?: boolean } = {},
): Promise<void> {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${PROCESS_TOKEN}-${(tempCounter++).toString(36)}.tmp`,
  );
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    if (options.sync !== false) await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * Appends `data` to `path` (created if missing) and fsyncs it: the journal's group commit. A
 * process killed mid-append leaves at most a partial last line, which readers skip.
 */
export async function appendFileSynced(path: string, data: string): Promise<void> {
  const handle = await open(path, 'a', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
