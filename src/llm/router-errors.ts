/**
 * The error of a request whose candidates all failed or were skipped: each model with its
 * reason, and what to do (the variables to set, or a model a provider does list).
 */
import { AppError, ERROR_CODES } from '../errors.js';
import { LlmError } from './llm-error.js';
import { PROVIDER_DESCRIPTORS, variablesHint } from './provider-descriptors.js';
import type { LlmRequest } from './types.js';

/**
 * The hint appended when nothing could answer: what configures each provider (`set
 * OPENAI_API_KEY, ANTHROPIC_API_KEY, …`), from the descriptors.
 */
export const LLM_VARIABLES_HINT = variablesHint(PROVIDER_DESCRIPTORS);

/**
 * `no model configured` (an empty chain), `no model of tier N can be used` (the probe's
 * findings left nothing to try), `no LLM provider available` (nothing configured or every
 * circuit open), or `every model of tier N failed` with the last failure's kind.
 */
export function exhausted(
  request: LlmRequest,
  list: readonly string[],
  skipped: string[],
  lastError: unknown,
  missingProvider: boolean,
  probed: { unusable: ReadonlySet<string>; listings: ReadonlyMap<string, readonly string[]> },
): AppError {
  const what = request.model === undefined ? `tier ${request.tier}` : `model ${request.model}`;
  if (list.length === 0) {
    return new AppError(
      ERROR_CODES.LLM_NOT_CONFIGURED,
      `no model configured for ${what}: add a chain to the models file or set AGENTIC_MODEL_TIER_${request.tier}`,
      { status: 503, expose: true },
    );
  }
  const tried = skipped.join('; ');
  if (lastError === undefined && probed.unusable.size > 0) {
    return new AppError(
      ERROR_CODES.LLM_NOT_CONFIGURED,
      `no model of ${what} can be used: ${tried}${listedHint(request.tier, probed)}`,
      { status: 503, expose: true },
    );
  }
  if (lastError === undefined) {
    return new AppError(
      ERROR_CODES.LLM_NOT_CONFIGURED,
      `no LLM provider available for ${what} (${tried}): ${LLM_VARIABLES_HINT}`,
      { status: 503, expose: true },
    );
  }
  const kind = lastError instanceof LlmError ? lastError.kind : 'transient';
  const hint = missingProvider ? `; to use other providers, ${LLM_VARIABLES_HINT}` : '';
  return new LlmError(kind, `every model of ${what} failed: ${tried}${hint}`, {
    provider: '',
    ...(lastError instanceof LlmError && lastError.retryAfterMs !== undefined
      ? { retryAfterMs: lastError.retryAfterMs }
      : {}),
    cause: lastError,
  });
}

/** What the providers whose models were skipped as unlisted do list, and where to name one. */
function listedHint(
  tier: number,
  probed: { unusable: ReadonlySet<string>; listings: ReadonlyMap<string, readonly string[]> },
): string {
  const lists = [...probed.unusable].flatMap((provider) => {
    const models = probed.listings.get(provider);
    return models === undefined ? [] : [{ provider, models }];
  });
  if (lists.length === 0) return '';
  const shown = lists.map(({ provider, models }) =>
    models.length === 0
      ? `${provider} lists no model`
      : `${provider} lists ${models.slice(0, 5).join(', ')}${models.length > 5 ? ', …' : ''}`,
  );
  const example = lists.find(({ models }) => models.length > 0);
  const variable = `AGENTIC_MODEL_TIER_${tier}`;
  const name =
    example === undefined
      ? `put a model it serves in ${variable}`
      : `name one in ${variable} (e.g. ${variable}=${example.provider}:${example.models[0] ?? ''})`;
  return `. ${shown.join('; ')}: ${name} or in the models file`;
}
