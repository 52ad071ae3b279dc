import { deletePrefix, serialize, searchEntries, type Entries } from './entries.js';
import type { NamespaceableMemoryStore } from './types.js';

/** The default memory store: in-process, not persisted (spec, memory store contract). */
export function createInProcessMemoryStore(): NamespaceableMemoryStore {
  const entries: Entries = new Map();
  // Executors turn a thrown MemoryStoreError into a rejection, as the contract is asynchronous.
  return {
    get: (key) =>
      new Promise((resolve) => {
        const text = entries.get(key);
        resolve(text === undefined ? undefined : (JSON.parse(text) as unknown));
      }),
    set: (key, value) =>
      new Promise((resolve) => {
        entries.set(key, serialize(key, value));
        resolve();
      }),
    delete: (key) => new Promise((resolve) => resolve(entries.delete(key))),
    search: (query, limit) =>
      new Promise((resolve) => resolve(searchEntries(entries, query, limit))),
    searchPrefix: (prefix, query, limit) =>
      new Promise((resolve) => resolve(searchEntries(entries, query, limit, prefix))),
    clear: () =>
      new Promise((resolve) => {
        entries.clear();
        resolve();
      }),
    clearPrefix: (prefix) =>
      new Promise((resolve) => {
        deletePrefix(entries, prefix);
        resolve();
      }),
  };
}
