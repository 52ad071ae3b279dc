export {
  DEFAULT_SEARCH_LIMIT,
  type MemoryHit,
  type MemoryStore,
  type NamespaceableMemoryStore,
} from './types.js';
export { MemoryStoreError } from './memory-error.js';
export { createInProcessMemoryStore } from './in-process-store.js';
export { openFileMemoryStore, type FileMemoryStore } from './file-store.js';
export { namespacedMemory, SHARED_NAMESPACE } from './namespaced.js';
