/** One hit of {@link MemoryStore.search}. */
export interface MemoryHit {
  key: string;
  value: unknown;
}

/**
 * The spec's memory store contract: asynchronous `get`, `set`, `delete`, `search(query,
 * limit=10)` and `clear`. Values are JSON values; `search` finds entries whose serialized
 * value contains the query.
 */
export interface MemoryStore {
  /** The value stored under `key`, or undefined. */
  get(key: string): Promise<unknown>;
  /** Stores a JSON value under `key`, replacing any previous one. */
  set(key: string, value: unknown): Promise<void>;
  /** Removes `key`; resolves true when it existed. */
  delete(key: string): Promise<boolean>;
  /** Entries whose serialized value contains `query`, in key order, at most `limit` (default 10). */
  search(query: string, limit?: number): Promise<MemoryHit[]>;
  /** Removes every entry. */
  clear(): Promise<void>;
}

/**
 * A store that namespaces can be carved from: search and clear restricted to the keys that
 * start with a prefix.
 */
export interface NamespaceableMemoryStore extends MemoryStore {
  /** {@link MemoryStore.search} over the keys starting with `prefix`; keys come back whole. */
  searchPrefix(prefix: string, query: string, limit?: number): Promise<MemoryHit[]>;
  /** Removes every key starting with `prefix`. */
  clearPrefix(prefix: string): Promise<void>;
}

/** Default number of hits of {@link MemoryStore.search}. */
export const DEFAULT_SEARCH_LIMIT = 10;
