/**
 * Model ids as people write them. `provider:model` with a known provider is taken as it is; a
 * bare name (`gpt-4o-mini`, `qwen2.5:7b`, `llama3:8b`: Ollama names have colons too) goes to
 * the provider whose last probe listed it, else to the provider its well-known prefix names;
 * when neither knows it, one probe is run (at most once a minute) and the listing looked at
 * again. Nothing left: a `not_found` LlmError naming the configured providers.
 */
import { LlmError } from './llm-error.js';
import { listsModel, parseModelId } from './model-id.js';
import { PROVIDER_DESCRIPTORS, type ProviderName } from './provider-descriptors.js';

/**
 * Bare model names whose vendor is plain from the name, for resolution before (or beside) a
 * probe, from each descriptor's `modelPrefixes`; open-weight names (llama, qwen, mistral, …) are
 * served by many providers, so only a probe listing resolves those.
 */
export const WELL_KNOWN_MODEL_PREFIXES: readonly { prefix: string; provider: ProviderName }[] =
  modelPrefixes(PROVIDER_DESCRIPTORS);

/** The bare-name prefixes of `descriptors`, in their order. */
export function modelPrefixes<Name extends string>(
  descriptors: readonly { name: Name; modelPrefixes: readonly string[] }[],
): { prefix: string; provider: Name }[] {
  return descriptors.flatMap((descriptor) =>
    descriptor.modelPrefixes.map((prefix) => ({ prefix, provider: descriptor.name })),
  );
}

/** Provider → the model names its probe listed. */
export type ModelListings = Readonly<Record<string, readonly string[]>>;

/** The provider the well-known prefixes give a bare name. */
export function providerByPrefix(
  name: string,
  prefixes: readonly { prefix: string; provider: string }[] = WELL_KNOWN_MODEL_PREFIXES,
): string | undefined {
  const lower = name.toLowerCase();
  return prefixes.find((entry) => lower.startsWith(entry.prefix))?.provider;
}

export interface ModelResolverOptions {
  /** Every provider name there is (`PROVIDER_NAMES`), in probe order. */
  known: readonly string[];
  /** Bare-name prefixes and their provider. @default WELL_KNOWN_MODEL_PREFIXES */
  prefixes?: readonly { prefix: string; provider: string }[];
  /** The providers configured now, in probe order. */
  configured: () => readonly string[];
  /** A fresh probe's listings; never rejects. @default none (prefixes and learned listings only) */
  probe?: () => Promise<ModelListings>;
  /** An unresolved id probes again only this long after the last probe, in ms. @default 60000 */
  reprobeAfterMs?: number;
  /** Epoch ms. @default Date.now */
  now?: () => number;
}

export interface ModelResolver {
  /** The `provider:model` id to call for `id`; rejects with a `not_found` LlmError. */
  resolve(id: string): Promise<string>;
  /** What `resolve` would answer without probing, or undefined. */
  known(id: string): string | undefined;
  /** Takes the listings of a probe that ran to its end. */
  learn(listings: ModelListings): void;
  /** Probes again when the last probe is `reprobeAfterMs` old (one probe for every caller). */
  refresh(): Promise<void>;
}

/** Creates a resolver (see the module comment for the order of decisions). */
export function createModelResolver(options: ModelResolverOptions): ModelResolver {
  const now = options.now ?? Date.now;
  const reprobeAfterMs = options.reprobeAfterMs ?? 60_000;
  let listings: ModelListings | undefined;
  let probedAt: number | undefined;
  let probing: Promise<void> | undefined;

  const learn = (next: ModelListings): void => {
    listings = next;
    probedAt = now();
  };

  /** `provider:model` when the id names a known provider, else undefined. */
  const explicit = (id: string): string | undefined => {
    const ref = parseModelId(id);
    return ref !== undefined && options.known.includes(ref.provider) ? id : undefined;
  };

  const fromListings = (name: string): string | undefined => {
    if (listings === undefined) return undefined;
    const provider = options.known.find((candidate) => listsModel(listings?.[candidate], name));
    return provider === undefined ? undefined : `${provider}:${name}`;
  };

  const known = (written: string): string | undefined => {
    const id = written.trim();
    if (id === '') return undefined;
    const byPrefix = providerByPrefix(id, options.prefixes);
    return (
      explicit(id) ?? fromListings(id) ?? (byPrefix === undefined ? undefined : `${byPrefix}:${id}`)
    );
  };

  const probeOnce = (): Promise<void> => {
    const probe = options.probe;
    if (probe === undefined) return Promise.resolve();
    // A probe that failed outright counts as run: unknown ids do not probe again at once.
    probing ??= probe()
      .then(learn, () => {
        probedAt = now();
      })
      .finally(() => (probing = undefined));
    return probing;
  };

  const unresolved = (id: string): LlmError => {
    const configured = options.configured();
    const listed = `configured: ${configured.length === 0 ? 'none' : configured.join(', ')}`;
    const ref = parseModelId(id);
    const message =
      ref === undefined
        ? `model '${id}' names no provider, and no configured provider lists it (${listed}); write it as provider:model (e.g. ${configured[0] ?? options.known[0] ?? 'openai'}:${id})`
        : `model '${id}': unknown provider '${ref.provider}' (the providers are ${options.known.join(', ')}; ${listed}), and no configured provider lists a model of that name`;
    return new LlmError('not_found', message, { provider: '' });
  };

  return {
    known,
    learn,
    async refresh() {
      if (probedAt !== undefined && now() - probedAt < reprobeAfterMs && probing === undefined) {
        return;
      }
      await probeOnce();
    },
    async resolve(written) {
      const id = written.trim();
      const found = known(id);
      if (found !== undefined) return found;
      if (probedAt === undefined || now() - probedAt >= reprobeAfterMs || probing !== undefined) {
        await probeOnce();
        const listed = known(id);
        if (listed !== undefined) return listed;
      }
      throw unresolved(id);
    },
  };
}
