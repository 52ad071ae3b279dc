/**
 * The tier chains as a router routes them now, with each model's circuit breaker and each
 * provider's connection circuit (`GET /api/models/tiers`). Reads states only: a model never
 * tried reads closed, and no circuit is created for it.
 */
import type { ModelTiersResponse } from '../generated/api/model-tiers-response.js';
import { LLM_TIERS, type TierChains } from './model-chains.js';
import { parseModelId } from './model-id.js';
import type { LlmRouter } from './router.js';

export function describeTierCircuits(
  chains: TierChains,
  router: Pick<LlmRouter, 'breakerStates' | 'breakerRetryInMs' | 'providerState'>,
): ModelTiersResponse {
  const states = new Map(router.breakerStates().map(({ model, state }) => [model, state]));
  const providers: string[] = [];
  const tiers = LLM_TIERS.map((tier) => ({
    tier,
    models: (chains[tier] ?? []).map((model) => {
      const provider = parseModelId(model)?.provider ?? model.split(':')[0] ?? model;
      if (!providers.includes(provider)) providers.push(provider);
      const circuit = states.get(model) ?? 'closed';
      const retryInMs = circuit === 'open' ? Math.max(0, router.breakerRetryInMs(model)) : 0;
      return { model, provider, circuit, retry_in_ms: Math.ceil(retryInMs) };
    }),
  }));
  return {
    tiers,
    providers: providers.map((provider) => ({ provider, circuit: router.providerState(provider) })),
  };
}
