import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { acquireWriterLock } from './writer-lock.js';
import { MemoryStoreError } from './memory-error.js';
import { deletePrefix, serialize, searchEntries, type Entries } from './entries.js';
import type { NamespaceableMemoryStore } from './types.js';

/** A persistent store; `close()` releases the file's writer lock. */
export interface FileMemoryStore extends NamespaceableMemoryStore {
  readonly path: string;
  close(): Promise<void>;
}

interface StoreFile {
  version: 1;
  entries: Record<string, unknown>;
}

/**
 * Opens the memory file at `path` (AGENTIC_MEMORY_PATH), creating it on the first write.
 * One writer: a lock file beside it (`<path>.lock`, holding the owner's pid) refuses a second
 * live process, and is taken over when its owner is dead. Every change is written whole to a
 * temporary file, fsynced and renamed over the old one, so a process killed mid-write leaves
 * the previous or the new file, never a torn one. Changes apply to memory in call order and
 * each resolves after a write that contains it; writes that queue up behind a running one are
 * coalesced into one (group commit), so 200 concurrent sets lose nothing and take a few writes.
 */
export async function openFileMemoryStore(path: string): Promise<FileMemoryStore> {
  const lock = await acquireWriterLock(`${path}.lock`);
  let entries: Entries;
  try {
    entries = await load(path);
  } catch (error) {
    await lock.release();
    throw error;
  }
  let writing: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  let closed = false;

  const persist = (): Promise<void> => {
    if (next !== undefined) return next;
    const previous = writing ?? Promise.resolve();
    const write = previous
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        writing = write;
        return writeAtomically(path, entries);
      })
      .finally(() => {
        if (writing === write) writing = undefined;
      });
    next = write;
    return write;
  };
  const change = (apply: () => void): Promise<void> => {
    if (closed) return Promise.reject(new MemoryStoreError('memory store is closed'));
    try {
      apply();
    } catch (error) {
      return Promise.reject(
        error instanceof Error ? error : new MemoryStoreError('memory change failed', error),
      );
    }
    return persist();
  };

  return {
    path,
    get: (key) =>
      new Promise((resolve) => {
        const text = entries.get(key);
        resolve(text === undefined ? undefined : (JSON.parse(text) as unknown));
      }),
    set: (key, value) => change(() => entries.set(key, serialize(key, value))),
    delete: async (key) => {
      let existed = false;
      await change(() => {
        existed = entries.delete(key);
      });
      return existed;
    },
    search: (query, limit) =>
      new Promise((resolve) => resolve(searchEntries(entries, query, limit))),
    searchPrefix: (prefix, query, limit) =>
      new Promise((resolve) => resolve(searchEntries(entries, query, limit, prefix))),
    clear: () => change(() => entries.clear()),
    clearPrefix: (prefix) => change(() => deletePrefix(entries, prefix)),
    close: async () => {
      if (closed) return;
      closed = true;
      await (next ?? writing)?.catch(() => undefined);
      await lock.release();
    },
  };
}

async function load(path: string): Promise<Entries> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new MemoryStoreError(`cannot read memory file ${basename(path)}`, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new MemoryStoreError(`memory file ${basename(path)} is not valid JSON`, error);
  }
  const file = parsed as Partial<StoreFile> | null;
  if (
    file === null ||
    typeof file !== 'object' ||
    file.version !== 1 ||
    typeof file.entries !== 'object' ||
    file.entries === null
  ) {
    throw new MemoryStoreError(`memory file ${basename(path)} is not a memory store file`);
  }
  return new Map(Object.entries(file.entries).map(([key, value]) => [key, JSON.stringify(value)]));
}

async function writeAtomically(path: string, entries: Entries): Promise<void> {
  const body = `{"version":1,"entries":{${[...entries].map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}}\n`;
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.writeFile(body, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new MemoryStoreError(`cannot write memory file ${basename(path)}`, error);
  }
}
