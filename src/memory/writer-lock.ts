import { open, readFile, unlink } from 'node:fs/promises';
import { MemoryStoreError } from './memory-error.js';

export interface WriterLock {
  release(): Promise<void>;
}

/**
 * Takes `lockPath` for this process: created exclusively with our pid inside. A lock whose
 * pid is no longer alive (its process was killed) is taken over; a live one is refused, as two
 * writers renaming over the same file would lose each other's updates.
 */
export async function acquireWriterLock(lockPath: string): Promise<WriterLock> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return { release: () => unlink(lockPath).catch(() => undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new MemoryStoreError('cannot create the memory file lock', error);
      }
    }
    const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw new MemoryStoreError(`memory file is in use by process ${owner}`);
    }
    if (owner === process.pid)
      throw new MemoryStoreError('memory file is already open in this process');
    await unlink(lockPath).catch(() => undefined);
  }
  throw new MemoryStoreError('cannot take the memory file lock');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
