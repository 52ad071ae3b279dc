/**
 * Embeddings for the vector memory store from a configured LLM provider's embeddings endpoint
 * (AGENTIC_MEMORY_EMBEDDINGS=`provider:model`): OpenAI-compatible `POST /embeddings` (OpenAI,
 * Azure OpenAI, GitHub Models, Ollama), Gemini `batchEmbedContents`. Anthropic has no
 * embeddings endpoint: the local hashing embedder is used for it (docs/tools.md, "Memory").
 */
import { AppError, ERROR_CODES } from '../errors.js';
import { parseModelId } from '../llm/model-id.js';
import type { Provider } from '../llm/types.js';
import { createHashingEmbedder, type Embedder } from './hashing-embedder.js';

/** AGENTIC_MEMORY_EMBEDDINGS' value for the local embedder. */
export const HASHING_EMBEDDINGS = 'hashing';

/** Providers by name, and why one is not configured. */
export interface EmbeddingProviders {
  get(name: string): Provider | undefined;
  missing(name: string): string | undefined;
}

export interface ProviderEmbedderOptions {
  /** Time limit of one embeddings request, in ms. @default 30000 */
  timeoutMs?: number;
}

/**
 * The embedder AGENTIC_MEMORY_EMBEDDINGS names: `hashing`, or a `provider:model` whose provider
 * is configured. Throws a config AppError for a malformed id or an unconfigured provider (at
 * start-up, not on the first memory write).
 */
export function embedderFor(
  setting: string,
  providers: EmbeddingProviders,
  options: ProviderEmbedderOptions = {},
): Embedder {
  if (setting === HASHING_EMBEDDINGS) return createHashingEmbedder();
  const ref = parseModelId(setting);
  if (ref === undefined) {
    throw configError(`'${setting}' is neither 'hashing' nor a provider:model id`);
  }
  const provider = providers.get(ref.provider);
  if (provider === undefined) {
    throw configError(
      `provider '${ref.provider}' is not configured (${providers.missing(ref.provider) ?? 'unknown provider'})`,
    );
  }
  // Anthropic's API has no embeddings endpoint.
  if (provider.embed === undefined) return createHashingEmbedder();
  return createProviderEmbedder(provider, ref.model, options);
}

/** Embeds one text per request through `provider`, normalized for the store's cosine. */
export function createProviderEmbedder(
  provider: Provider,
  model: string,
  options: ProviderEmbedderOptions = {},
): Embedder {
  const embed = provider.embed?.bind(provider);
  if (embed === undefined) throw configError(`provider '${provider.name}' cannot embed`);
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (text) => {
    const [vector] = await embed({ model, input: [text], signal: AbortSignal.timeout(timeoutMs) });
    return normalized(vector ?? []);
  };
}

function normalized(values: readonly number[]): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

function configError(why: string): AppError {
  return new AppError(ERROR_CODES.CONFIG, `AGENTIC_MEMORY_EMBEDDINGS: ${why}`);
}
