import { errorMessage } from '../errors.js';
import { cosine, createHashingEmbedder, tokenize, type Embedder } from './hashing-embedder.js';
import { deletePrefix, serialize } from './entries.js';
import { MemoryStoreError } from './memory-error.js';
import { DEFAULT_SEARCH_LIMIT, type MemoryHit, type NamespaceableMemoryStore } from './types.js';

/** The constant of reciprocal rank fusion: a document's score is Σ 1 / (k + rank). */
export const RRF_K = 60;
const BM25_K1 = 1.2;
const BM25_B = 0.75;

export interface VectorMemoryStoreOptions {
  /**
   * The embedder: a provider's embeddings endpoint (`createProviderEmbedder`) or any function.
   * @default a local hashing embedder ({@link createHashingEmbedder})
   */
  embed?: Embedder;
}

interface Doc {
  text: string;
  /** A promise while a provider computes it. */
  vector: Float32Array | Promise<Float32Array>;
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

  const search = async (
    prefix: string,
    query: string,
    limit = DEFAULT_SEARCH_LIMIT,
  ): Promise<MemoryHit[]> => {
    if (!Number.isInteger(limit) || limit < 1)
      throw new MemoryStoreError('search limit must be a positive integer');
    const pool = [...docs].filter(([key]) => key.startsWith(prefix));
    if (pool.length === 0) return [];
    const queryTerms = [...new Set(tokenize(query))];
    const queryVector = await embedded(embed(query));
    // Entries still being embedded are waited for; one whose embedding failed has no cosine.
    const vectors = await Promise.all(
      pool.map(([, doc]) => Promise.resolve(doc.vector).catch(() => undefined)),
    );
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
    const scored = pool.map(([key, doc], i) => {
      const vector = vectors[i];
      return {
        key,
        doc,
        lexical: bm25(doc),
        semantic: vector === undefined ? 0 : cosine(queryVector, vector),
      };
    });
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
      .flatMap(([key]) => {
        // An entry deleted while the query was embedded is not returned.
        const doc = docs.get(key);
        return doc === undefined ? [] : [{ key, value: JSON.parse(doc.text) as unknown }];
      });
  };

  /** Stores `doc` under `key` at once (reads see it); resolves once its vector is known. */
  const store = async (key: string, doc: Doc): Promise<void> => {
    const previous = docs.get(key);
    docs.set(key, doc);
    if (!(doc.vector instanceof Promise)) return;
    try {
      doc.vector = await embedded(doc.vector);
    } catch (error) {
      // A failed set changes nothing (unless a later set replaced the entry meanwhile).
      if (docs.get(key) === doc) {
        if (previous === undefined) docs.delete(key);
        else docs.set(key, previous);
      }
      throw error;
    }
  };

  return {
    get: (key) =>
      new Promise((resolve) => {
        const doc = docs.get(key);
        resolve(doc === undefined ? undefined : (JSON.parse(doc.text) as unknown));
      }),
    set: async (key, value) => store(key, index(serialize(key, value))),
    delete: (key) => new Promise((resolve) => resolve(docs.delete(key))),
    search: async (query, limit) => search('', query, limit),
    searchPrefix: async (prefix, query, limit) => search(prefix, query, limit),
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

/** A vector, or the embedder's failure as a memory store error. */
async function embedded(vector: Float32Array | Promise<Float32Array>): Promise<Float32Array> {
  try {
    return await vector;
  } catch (error) {
    throw new MemoryStoreError(`embedding failed: ${errorMessage(error)}`);
  }
}

function order(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
