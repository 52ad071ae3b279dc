import type { LlmClient, LlmRequest, LlmResponse, TokenUsage } from './types.js';

/** The model name reported for placeholder responses. */
export const PLACEHOLDER_MODEL = 'placeholder';

/**
 * The no-LLM client (`AGENTIC_NO_LLM=1`): deterministic placeholder text, every expected output
 * key filled with a placeholder string, `model: "placeholder"` and a token count derived from
 * the prompt length, so workflows run end to end without provider credentials.
 */
export function createNoLlmClient(): LlmClient {
  return {
    complete(request: LlmRequest): Promise<LlmResponse> {
      if (request.signal.aborted) return Promise.reject(abortReason(request.signal));
      // A chat request carries its text in `messages`, a step's in `prompt`.
      const promptChars =
        request.messages?.reduce((sum, message) => sum + message.content.length, 0) ??
        request.prompt.length;
      const text = `[placeholder tier${request.tier} response: ${promptChars} prompt characters]`;
      // The placeholder is the one candidate of every tier (chat's `route` frame names it).
      request.onRoute?.(PLACEHOLDER_MODEL);
      const fields: Record<string, unknown> = {};
      for (const key of request.outputKeys ?? []) {
        fields[key] = `[placeholder ${key}]`;
      }
      return Promise.resolve({
        text,
        model: PLACEHOLDER_MODEL,
        tokensUsed: placeholderTokens(request.system.length + promptChars, text.length),
        fields,
      });
    },
  };
}

/** Roughly four characters per token, as providers count. */
function placeholderTokens(promptChars: number, outputChars: number): TokenUsage {
  const input = Math.ceil(promptChars / 4);
  const output = Math.ceil(outputChars / 4);
  return { input, output, total: input + output };
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}
