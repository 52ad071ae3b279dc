import { AppError, ERROR_CODES } from '../errors.js';
import { LLM_VARIABLES_HINT } from './router.js';
import type { LlmClient, LlmResponse } from './types.js';

/** The message of an LLM step run without a provider. */
export const LLM_NOT_CONFIGURED_MESSAGE = `no LLM provider configured: ${LLM_VARIABLES_HINT}`;

/**
 * The client used when no provider is configured and no-LLM mode is off: every call fails with
 * a message naming what to configure (a step failure, never a disguised success).
 */
export function createUnconfiguredLlmClient(): LlmClient {
  return {
    complete(): Promise<LlmResponse> {
      return Promise.reject(
        new AppError(ERROR_CODES.LLM_NOT_CONFIGURED, LLM_NOT_CONFIGURED_MESSAGE, { status: 503 }),
      );
    },
  };
}
