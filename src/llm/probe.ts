/**
 * The provider probe (spec endpoint 4): every configured provider is asked for its model list,
 * all at once, each with a short timeout. No tokens are spent. A provider that answers is
 * available; the others are listed with the reason (the variable to set, or the error).
 */
import { errorMessage } from '../errors.js';
import { parseModelId } from './model-id.js';
import { LLM_TIERS, type TierChains } from './model-chains.js';
import type { ProviderSet } from './provider-set.js';

/** The probe's answer (spec "Model probe", plus the reasons and the models found). */
export interface ProbeResult {
  available_providers: string[];
  unavailable_providers: string[];
  /** Provider → why it is unavailable. */
  unavailable_reasons: Record<string, string>;
  /** Tier ("1".."5") → the first model of its chain whose provider answered. */
  tier_defaults: Record<string, string>;
  /** Provider → the models it listed. */
  models: Record<string, string[]>;
}

export interface ProbeOptions {
  providers: Pick<ProviderSet, 'configured' | 'unconfigured'>;
  chains: TierChains;
  /** Per-provider timeout in ms. @default 2000 */
  timeoutMs?: number;
  /** Aborts every request (a client that went away). */
  signal?: AbortSignal;
}

/** Providers whose chat models must be in their list (local servers serve only pulled models). */
const LISTS_EVERY_MODEL = new Set(['ollama']);

/** Probes every configured provider in parallel; never rejects (failures are reasons). */
export async function probeProviders(options: ProbeOptions): Promise<ProbeResult> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const configured = options.providers.configured();
  const answers = await Promise.all(
    configured.map(async (provider) => {
      const signals = [AbortSignal.timeout(timeoutMs)];
      if (options.signal !== undefined) signals.push(options.signal);
      try {
        return { name: provider.name, models: await provider.listModels(AbortSignal.any(signals)) };
      } catch (error) {
        const reason = isTimeout(error) ? `no answer within ${timeoutMs} ms` : errorMessage(error);
        return { name: provider.name, error: reason };
      }
    }),
  );
  const result: ProbeResult = {
    available_providers: [],
    unavailable_providers: [],
    unavailable_reasons: {},
    tier_defaults: {},
    models: {},
  };
  for (const answer of answers) {
    if (answer.models !== undefined) {
      result.available_providers.push(answer.name);
      result.models[answer.name] = answer.models;
    } else {
      result.unavailable_providers.push(answer.name);
      result.unavailable_reasons[answer.name] = answer.error ?? 'unavailable';
    }
  }
  for (const { name, reason } of options.providers.unconfigured()) {
    result.unavailable_providers.push(name);
    result.unavailable_reasons[name] = reason;
  }
  for (const tier of LLM_TIERS) {
    const found = (options.chains[tier] ?? []).find((id) => {
      const ref = parseModelId(id);
      if (ref === undefined) return false;
      const models = result.models[ref.provider];
      if (models === undefined) return false;
      return !LISTS_EVERY_MODEL.has(ref.provider) || models.includes(ref.model);
    });
    if (found !== undefined) result.tier_defaults[tier] = found;
  }
  return result;
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TimeoutError';
}
