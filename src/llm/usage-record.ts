/**
 * A {@link TokenUsage} as the wire and the run files write it (`tokens_used`, snake_case, no
 * cost) and its cost beside it (`cost_usd`, docs/llm.md "Cost"), and back: the one place the
 * events, the run records and a resumed or rerun step convert between the two.
 */
import type { TokenUsage } from './types.js';

/** `tokens_used` of an event or a step record. */
export interface TokenUsageRecord {
  input: number;
  output: number;
  total: number;
  /** Input tokens read from the prompt cache (a part of `input`). */
  cached?: number;
  /** Input tokens written to the prompt cache (a part of `input`). */
  cache_write?: number;
}

/** The `tokens_used` of `usage`. */
export function usageRecord(usage: TokenUsage): TokenUsageRecord;
export function usageRecord(usage: TokenUsage | null): TokenUsageRecord | null;
export function usageRecord(usage: TokenUsage | null): TokenUsageRecord | null {
  if (usage === null) return null;
  // The common case (no cache) as one literal, like the rest of the run record.
  if (usage.cached === undefined && usage.cacheWrite === undefined) {
    return { input: usage.input, output: usage.output, total: usage.total };
  }
  return {
    input: usage.input,
    output: usage.output,
    total: usage.total,
    ...(usage.cached === undefined ? {} : { cached: usage.cached }),
    ...(usage.cacheWrite === undefined ? {} : { cache_write: usage.cacheWrite }),
  };
}

/**
 * The `cost_usd` beside `tokens_used`: 0 when no tokens were spent (no model call reported),
 * the tokens' cost, or null when some of them were spent on a model without a price (or by a
 * client that prices nothing, such as a custom agent reporting its own tokens).
 */
export function usageCost(usage: TokenUsage | null): number | null {
  if (usage === null) return 0;
  return usage.costUsd ?? null;
}

/**
 * A `tokens_used` read back from a run file (a resumed run's finished step, a rerun's reused
 * one) with the `cost_usd` written beside it: files written before costs were recorded have
 * none, so the cost of their tokens is unknown (null).
 */
export function usageFromRecord(tokens: unknown, costUsd: unknown): TokenUsage | null {
  if (typeof tokens !== 'object' || tokens === null) return null;
  const record = tokens as Partial<TokenUsageRecord>;
  if (typeof record.input !== 'number' || typeof record.output !== 'number') return null;
  return {
    input: record.input,
    output: record.output,
    total: typeof record.total === 'number' ? record.total : record.input + record.output,
    ...(typeof record.cached === 'number' ? { cached: record.cached } : {}),
    ...(typeof record.cache_write === 'number' ? { cacheWrite: record.cache_write } : {}),
    costUsd: typeof costUsd === 'number' ? costUsd : null,
  };
}
