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
export { createVectorMemoryStore, RRF_K, type VectorMemoryStoreOptions } from './vector-store.js';
export { createHashingEmbedder, HASHING_DIMENSIONS, type Embedder } from './hashing-embedder.js';
export {
  createProviderEmbedder,
  embedderFor,
  HASHING_EMBEDDINGS,
  type EmbeddingProviders,
  type ProviderEmbedderOptions,
} from './provider-embedder.js';
