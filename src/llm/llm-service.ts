/**
 * The LLM layer of a service or CLI process, built from {@link LlmSettings}: the providers,
 * the tier chains (models file + `AGENTIC_MODEL_TIER_<N>`), the router, and the probe.
 */
import type { LlmSettings } from '../config/llm-settings.js';
import { shippedModelsFile } from '../config/package-info.js';
import type { HttpClientOptions } from './http.js';
import { loadTierChains, mergeTierChains, type TierChains } from './model-chains.js';
import { loadPriceTable, type PriceTable } from './prices.js';
import { createModelResolver, modelPrefixes } from './model-resolver.js';
import { askProviders, summarizeProbe, type ProbeResult } from './probe.js';
import { PROVIDER_DESCRIPTORS, type ProviderDescriptor } from './provider-descriptors.js';
import { createProviderSet, type ProviderSet } from './provider-set.js';
import { createLlmRouter, type LlmRouter, type RouterOptions } from './router.js';

export interface LlmService {
  /** The client LLM steps and chat go through. */
  router: LlmRouter;
  providers: ProviderSet;
  chains: TierChains;
  /** The price table every call's tokens are priced at (`AGENTIC_PRICES_FILE`). */
  prices: PriceTable;
  /** Asks every configured provider for its model list (no tokens spent). */
  probe(signal?: AbortSignal): Promise<ProbeResult>;
  /** Closes the providers' connection pools. */
  close(): Promise<void>;
}

export interface LlmServiceOptions extends Pick<
  RouterOptions,
  'onCall' | 'breakerSharing' | 'now'
> {
  /** Paces the providers' answer chunks (the service's turn slicer). @default not paced */
  pace?: HttpClientOptions['pace'];
  /** The providers there are, in probe order. @default PROVIDER_DESCRIPTORS */
  descriptors?: readonly ProviderDescriptor[];
}

/** Throws a config AppError for an unreadable or invalid models file or price table. */
export function createLlmService(
  settings: LlmSettings,
  options: LlmServiceOptions = {},
): LlmService {
  const chains = mergeTierChains(
    loadTierChains(settings.modelsFile ?? shippedModelsFile()),
    settings.tierOverrides,
  );
  const prices = loadPriceTable(settings.pricesFile);
  const descriptors = options.descriptors ?? PROVIDER_DESCRIPTORS;
  const providers = createProviderSet(settings, options.pace, descriptors);
  // Every probe that ran to its end teaches the router which models a provider does not serve
  // and which providers it could not reach; the caller's probes also teach the resolver.
  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const answers = await askProviders({
      providers,
      timeoutMs: settings.probeTimeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
    if (signal?.aborted !== true) router.learnProbe(answers);
    return summarizeProbe(answers, { providers, chains });
  };
  const resolver = createModelResolver({
    known: descriptors.map((descriptor) => descriptor.name),
    prefixes: modelPrefixes(descriptors),
    configured: () => providers.configured().map((provider) => provider.name),
    probe: async () => (await probe()).models,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const router: LlmRouter = createLlmRouter({
    resolver,
    // A chain skips an unlisted model on a probe at most a minute old (the resolver's pace).
    refreshListings: () => resolver.refresh(),
    providers,
    chains,
    breakerThreshold: settings.breakerThreshold,
    breakerCooldownMs: settings.breakerCooldownMs,
    retryAfterMaxMs: settings.retryAfterMaxMs,
    maxInFlight: settings.maxInFlight,
    prices,
    ...(options.onCall === undefined ? {} : { onCall: options.onCall }),
    ...(options.breakerSharing === undefined ? {} : { breakerSharing: options.breakerSharing }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return {
    router,
    providers,
    chains,
    prices,
    probe: async (signal) => {
      const result = await probe(signal);
      if (signal?.aborted !== true) resolver.learn(result.models);
      return result;
    },
    close: () => providers.close(),
  };
}
