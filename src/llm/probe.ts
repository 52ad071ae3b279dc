/**
 * The provider probe (spec endpoint 4): every configured provider is asked for its model list,
 * all at once, each with a short timeout. No tokens are spent. A provider that answers is
 * available; the others are listed with the reason (the variable to set, or the error). The
 * router learns from the same answers (router.ts `learnProbe`): which models a provider whose
 * list names every model does not serve, and which providers could not be reached at all.
 */
import { errorMessage } from '../errors.js';
import { LlmError } from './llm-error.js';
import { listsModel, parseModelId } from './model-id.js';
import { LLM_TIERS, type TierChains } from './model-chains.js';
import type { ProviderSet } from './provider-set.js';

/** A tier model the router skips, and why (`not listed by openai`). */
export interface SkippedModel {
  model: string;
  reason: string;
}

/** The probe's answer (spec "Model probe", plus the reasons, the models found, the skips). */
export interface ProbeResult {
  available_providers: string[];
  unavailable_providers: string[];
  /** Provider → why it is unavailable. */
  unavailable_reasons: Record<string, string>;
  /** Tier ("1".."5") → the first model of its chain whose provider answered and serves it. */
  tier_defaults: Record<string, string>;
  /** Provider → the models it listed. */
  models: Record<string, string[]>;
  /** Tier → the models of its chain that the router skips because their provider does not list them. */
  skipped_models: Record<string, SkippedModel[]>;
}

/** What one configured provider answered. */
export type ProviderAnswer =
  | { name: string; models: string[]; listsEveryModel: boolean }
  | { name: string; error: string; unreachable: boolean };

export interface ProbeOptions {
  providers: Pick<ProviderSet, 'configured' | 'unconfigured'>;
  chains: TierChains;
  /** Per-provider timeout in ms. @default 2000 */
  timeoutMs?: number;
  /** Aborts every request (a client that went away). */
  signal?: AbortSignal;
}

/** Probes every configured provider in parallel; never rejects (failures are reasons). */
export async function probeProviders(options: ProbeOptions): Promise<ProbeResult> {
  return summarizeProbe(await askProviders(options), options);
}

/** Asks every configured provider for its model list, in parallel; never rejects. */
export async function askProviders(
  options: Pick<ProbeOptions, 'providers' | 'timeoutMs' | 'signal'>,
): Promise<ProviderAnswer[]> {
  const timeoutMs = options.timeoutMs ?? 2000;
  return Promise.all(
    options.providers.configured().map(async (provider): Promise<ProviderAnswer> => {
      const signals = [AbortSignal.timeout(timeoutMs)];
      if (options.signal !== undefined) signals.push(options.signal);
      try {
        return {
          name: provider.name,
          models: await provider.listModels(AbortSignal.any(signals)),
          listsEveryModel: provider.listsEveryModel === true,
        };
      } catch (error) {
        const reason = isTimeout(error) ? `no answer within ${timeoutMs} ms` : errorMessage(error);
        return {
          name: provider.name,
          error: reason,
          unreachable: error instanceof LlmError && error.unreachable,
        };
      }
    }),
  );
}

/**
 * The chain's model skipped for its provider's list, or undefined: only a provider whose list
 * names every model (and that answered with one) rules a model out.
 */
export function unlistedReason(
  id: string,
  listings: ReadonlyMap<string, readonly string[]>,
): string | undefined {
  const ref = parseModelId(id);
  if (ref === undefined) return undefined;
  const models = listings.get(ref.provider);
  if (models === undefined || listsModel(models, ref.model)) return undefined;
  return `not listed by ${ref.provider}`;
}

/** Provider → its list, for the providers that answered with a list naming every model. */
export function authoritativeListings(
  answers: readonly ProviderAnswer[],
): Map<string, readonly string[]> {
  const listings = new Map<string, readonly string[]>();
  for (const answer of answers) {
    if ('models' in answer && answer.listsEveryModel) listings.set(answer.name, answer.models);
  }
  return listings;
}

/** The probe result of `answers` (spec "Model probe"). */
export function summarizeProbe(
  answers: readonly ProviderAnswer[],
  options: Pick<ProbeOptions, 'providers' | 'chains'>,
): ProbeResult {
  const result: ProbeResult = {
    available_providers: [],
    unavailable_providers: [],
    unavailable_reasons: {},
    tier_defaults: {},
    models: {},
    skipped_models: {},
  };
  for (const answer of answers) {
    if ('models' in answer) {
      result.available_providers.push(answer.name);
      result.models[answer.name] = answer.models;
    } else {
      result.unavailable_providers.push(answer.name);
      result.unavailable_reasons[answer.name] = answer.error;
    }
  }
  for (const { name, reason } of options.providers.unconfigured()) {
    result.unavailable_providers.push(name);
    result.unavailable_reasons[name] = reason;
  }
  const listings = authoritativeListings(answers);
  for (const tier of LLM_TIERS) {
    const chain = options.chains[tier] ?? [];
    const skipped = chain.flatMap((model) => {
      const reason = unlistedReason(model, listings);
      return reason === undefined ? [] : [{ model, reason }];
    });
    if (skipped.length > 0) result.skipped_models[tier] = skipped;
    const found = chain.find((id) => {
      const ref = parseModelId(id);
      return (
        ref !== undefined &&
        result.models[ref.provider] !== undefined &&
        unlistedReason(id, listings) === undefined
      );
    });
    if (found !== undefined) result.tier_defaults[tier] = found;
  }
  return result;
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TimeoutError';
}
