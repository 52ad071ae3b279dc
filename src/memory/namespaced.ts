import type { MemoryStore, NamespaceableMemoryStore } from './types.js';

/** The namespace every workflow may share. */
export const SHARED_NAMESPACE = 'shared';

/**
 * A view of `store` whose keys live under `namespace` (`<namespace>/<key>` in the store):
 * each workflow gets its own namespace by default and workflows meet in
 * {@link SHARED_NAMESPACE}. Search and clear see this namespace only.
 */
export function namespacedMemory(store: NamespaceableMemoryStore, namespace: string): MemoryStore {
  const prefix = `${namespace}/`;
  return {
    get: (key) => store.get(prefix + key),
    set: (key, value) => store.set(prefix + key, value),
    delete: (key) => store.delete(prefix + key),
    search: async (query, limit) =>
      (await store.searchPrefix(prefix, query, limit)).map((hit) => ({
        key: hit.key.slice(prefix.length),
        value: hit.value,
      })),
    clear: () => store.clearPrefix(prefix),
  };
}
