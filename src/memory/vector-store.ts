import { cosine, createHashingEmbedder, tokenize, type Embedder } from './hashing-embedder.js';
import { deletePrefix, serialize } from './entries.js';
import { MemoryStoreError } from './memory-error.js';
import { DEFAULT_SEARCH_LIMIT, type MemoryHit, type NamespaceableMemoryStore } from './types.js';

/** The constant of reciprocal rank fusion: a document's score is Σ 1 / (k + rank). */
export const RRF_K = 60;
const BM25_K1 = 1.2;
const BM25_B = 0.75;

export interface VectorMemoryStoreOptions {
  /** @default a local hashing embedder ({@link createHashingEmbedder}) */
  embed?: Embedder;
}

interface Doc {
  text: string;
  vector: Float32Array;
  terms: Map<string, number>;
  length: number;
}

/**
 * An in-process store whose `search` is hybrid (spec, memory store contract): the cosine of
 * embeddings and BM25 over words, each ranked, fused by reciprocal rank fusion with k = 60.
 * Entries that share no word with the query and have no positive cosine are not returned.
 */
export function createVectorMemoryStore(
  options: VectorMemoryStoreOptions = {},
): NamespaceableMemoryStore {
  const embed = options.embed ?? createHashingEmbedder();
  const docs = new Map<string, Doc>();

  const index = (text: string): Doc => {
    const words = tokenize(text);
    const terms = new Map<string, number>();
    for (const word of words) terms.set(word, (terms.get(word) ?? 0) + 1);
    return { text, vector: embed(text), terms, length: words.length };
  };

  const search = (prefix: string, query: string, limit = DEFAULT_SEARCH_LIMIT): MemoryHit[] => {
    if (!Number.isInteger(limit) || limit < 1)
      throw new MemoryStoreError('search limit must be a positive integer');
    const pool = [...docs].filter(([key]) => key.startsWith(prefix));
    if (pool.length === 0) return [];
    const queryTerms = [...new Set(tokenize(query))];
    const queryVector = embed(query);
    const averageLength = pool.reduce((sum, [, doc]) => sum + doc.length, 0) / pool.length || 1;
    const df = new Map(
      queryTerms.map((term) => [term, pool.filter(([, doc]) => doc.terms.has(term)).length]),
    );
    const bm25 = (doc: Doc): number =>
      queryTerms.reduce((score, term) => {
        const tf = doc.terms.get(term) ?? 0;
        if (tf === 0) return score;
        const n = df.get(term) ?? 0;
        const idf = Math.log(1 + (pool.length - n + 0.5) / (n + 0.5));
        return (
          score +
          (idf * tf * (BM25_K1 + 1)) /
            (tf + BM25_K1 * (1 - BM25_B + (BM25_B * doc.length) / averageLength))
        );
      }, 0);
    const scored = pool.map(([key, doc]) => ({
      key,
      doc,
      lexical: bm25(doc),
      semantic: cosine(queryVector, doc.vector),
    }));
    const fused = new Map<string, number>();
    const fuse = (ranking: typeof scored): void =>
      ranking.forEach((entry, rank) =>
        fused.set(entry.key, (fused.get(entry.key) ?? 0) + 1 / (RRF_K + rank + 1)),
      );
    fuse(
      scored
        .filter((entry) => entry.lexical > 0)
        .sort((a, b) => b.lexical - a.lexical || order(a.key, b.key)),
    );
    fuse(
      scored
        .filter((entry) => entry.semantic > 0)
        .sort((a, b) => b.semantic - a.semantic || order(a.key, b.key)),
    );
    return [...fused]
      .sort((a, b) => b[1] - a[1] || order(a[0], b[0]))
      .slice(0, limit)
      .map(([key]) => ({ key, value: JSON.parse((docs.get(key) as Doc).text) as unknown }));
  };

  return {
    get: (key) =>
      new Promise((resolve) => {
        const doc = docs.get(key);
        resolve(doc === undefined ? undefined : (JSON.parse(doc.text) as unknown));
      }),
    set: (key, value) =>
      new Promise((resolve) => {
        docs.set(key, index(serialize(key, value)));
        resolve();
      }),
    delete: (key) => new Promise((resolve) => resolve(docs.delete(key))),
    search: (query, limit) => new Promise((resolve) => resolve(search('', query, limit))),
    searchPrefix: (prefix, query, limit) =>
      new Promise((resolve) => resolve(search(prefix, query, limit))),
    clear: () =>
      new Promise((resolve) => {
        docs.clear();
        resolve();
      }),
    clearPrefix: (prefix) =>
      new Promise((resolve) => {
        deletePrefix(docs, prefix);
        resolve();
      }),
  };
}

function order(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
