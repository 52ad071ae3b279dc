/**
 * Turns text into a fixed-length, L2-normalized vector (at once, or from a provider's
 * embeddings endpoint); the vector store compares them by cosine.
 */
export type Embedder = (text: string) => Float32Array | Promise<Float32Array>;

/** Dimensions of {@link createHashingEmbedder} vectors. */
export const HASHING_DIMENSIONS = 512;

/** Lower-case word tokens (letters and digits of any script). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A local embedder with no model: feature hashing of words and of character trigrams (so
 * `deploy` and `deployment` share features) into `dimensions` signed buckets, L2-normalized.
 * Deterministic, so stored vectors stay valid across restarts.
 */
export function createHashingEmbedder(
  dimensions = HASHING_DIMENSIONS,
): (text: string) => Float32Array {
  return (text) => {
    const vector = new Float32Array(dimensions);
    const add = (feature: string, weight: number): void => {
      const hash = fnv1a(feature);
      vector[hash % dimensions] =
        (vector[hash % dimensions] ?? 0) + ((hash & 0x80000000) === 0 ? weight : -weight);
    };
    for (const word of tokenize(text)) {
      add(`w:${word}`, 1);
      const padded = `^${word}$`;
      for (let i = 0; i + 3 <= padded.length; i += 1) add(`t:${padded.slice(i, i + 3)}`, 0.5);
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < dimensions; i += 1) vector[i] = (vector[i] ?? 0) / norm;
    return vector;
  };
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Cosine of two normalized vectors (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i += 1) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot;
}
