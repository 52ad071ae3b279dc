import { DEFAULT_SEARCH_LIMIT, type MemoryHit } from './types.js';
import { MemoryStoreError } from './memory-error.js';

/**
 * The entries of a store as a map of key → serialized JSON. Keeping the serialized text is
 * what search matches on (spec: substring of the serialized value) and gives every reader its
 * own copy, so a caller mutating a returned object never changes the store.
 */
export type Entries = Map<string, string>;

export function serialize(key: string, value: unknown): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new MemoryStoreError('memory keys are non-empty strings');
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new MemoryStoreError(`memory value for '${key}' is not JSON-serializable`, error);
  }
  if (text === undefined)
    throw new MemoryStoreError(`memory value for '${key}' is not a JSON value`);
  return text;
}

export function searchEntries(
  entries: Entries,
  query: string,
  limit = DEFAULT_SEARCH_LIMIT,
  prefix = '',
): MemoryHit[] {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new MemoryStoreError('search limit must be a positive integer');
  }
  const hits: MemoryHit[] = [];
  for (const key of [...entries.keys()].sort()) {
    if (!key.startsWith(prefix)) continue;
    const text = entries.get(key) as string;
    if (!text.includes(query)) continue;
    hits.push({ key, value: JSON.parse(text) as unknown });
    if (hits.length >= limit) break;
  }
  return hits;
}

export function deletePrefix(entries: Map<string, unknown>, prefix: string): void {
  for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
}
