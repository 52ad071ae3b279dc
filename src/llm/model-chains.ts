/**
 * Tier fallback chains: the shipped defaults in `agents/models.yaml` (or `AGENTIC_MODELS_FILE`),
 * each tier replaced as a whole by `AGENTIC_MODEL_TIER_<N>`.
 *
 * ```yaml
 * tiers:
 *   1: [ollama:qwen2.5:3b, openai:gpt-4.1-nano]
 *   2: [openai:gpt-4.1-mini, anthropic:claude-3-5-haiku-latest]
 * ```
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { AppError, ERROR_CODES } from '../errors.js';
import { parseModelId } from './model-id.js';

/** Tier ("1".."5") → ordered model ids. */
export type TierChains = Readonly<Record<string, readonly string[]>>;

export const LLM_TIERS = ['1', '2', '3', '4', '5'] as const;

function chainsError(file: string, problem: string, cause?: unknown): AppError {
  return new AppError(ERROR_CODES.CONFIG, `models file ${file}: ${problem}`, {
    status: 500,
    expose: true,
    cause,
  });
}

/** Reads and checks a chains file; throws a config AppError naming the file and the problem. */
export function loadTierChains(file: string): TierChains {
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'), { uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '') : 'unreadable';
    throw chainsError(file, reason, error);
  }
  const tiers = (data as { tiers?: unknown } | null)?.tiers;
  if (typeof tiers !== 'object' || tiers === null || Array.isArray(tiers)) {
    throw chainsError(
      file,
      'expected a `tiers:` map of tier number to a list of provider:model ids',
    );
  }
  const chains: Record<string, readonly string[]> = {};
  for (const [tier, list] of Object.entries(tiers as Record<string, unknown>)) {
    if (!(LLM_TIERS as readonly string[]).includes(tier)) {
      throw chainsError(file, `tier ${tier}: tiers are 1 to 5`);
    }
    if (!Array.isArray(list) || !list.every((id) => typeof id === 'string')) {
      throw chainsError(file, `tier ${tier}: expected a list of provider:model ids`);
    }
    const bad = list.filter((id) => parseModelId(id) === undefined);
    if (bad.length > 0) {
      throw chainsError(file, `tier ${tier}: ${bad.join(', ')} is not a provider:model id`);
    }
    chains[tier] = Object.freeze([...list]);
  }
  return Object.freeze(chains);
}

/** The file's chains with each overridden tier replaced. */
export function mergeTierChains(base: TierChains, overrides: TierChains): TierChains {
  return Object.freeze({ ...base, ...overrides });
}
