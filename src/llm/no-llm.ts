import type { LlmClient, LlmRequest, LlmResponse, TokenUsage, ToolCall } from './types.js';

/** The model name reported for placeholder responses. */
export const PLACEHOLDER_MODEL = 'placeholder';

/**
 * The no-LLM client (`AGENTIC_NO_LLM=1`): deterministic placeholder text, every expected output
 * key filled with a placeholder string, `model: "placeholder"` and a token count derived from
 * the prompt length, so workflows run end to end without provider credentials.
 *
 * Scripted tool calls: a request offering tools and carrying a `script` (a step's
 * `placeholder_tool_calls` input: an array of rounds, each an array of `{tool, args}`) answers
 * its round N (the number of assistant turns so far) with that round's calls, and with the
 * placeholder text once the script is used up — so the agent loop runs without a provider.
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
      const round = request.messages?.filter((m) => m.role === 'assistant').length ?? 0;
      const calls = request.tools === undefined ? [] : scriptedCalls(request.script, round);
      if (calls.length > 0) {
        return Promise.resolve({
          text: '',
          model: PLACEHOLDER_MODEL,
          tokensUsed: placeholderTokens(request.system.length + promptChars, 0),
          finishReason: 'tool_calls',
          toolCalls: calls,
        });
      }
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

/**
 * Round `round` of a placeholder script as tool calls. Throws a clear error for a script that is
 * not an array of rounds of `{tool: string, args?: object}` (the step fails with it).
 */
function scriptedCalls(script: unknown, round: number): ToolCall[] {
  if (script === undefined) return [];
  if (!Array.isArray(script)) {
    throw new Error('placeholder_tool_calls must be an array of rounds (arrays of {tool, args})');
  }
  const calls: unknown = script[round];
  if (calls === undefined) return [];
  if (!Array.isArray(calls)) {
    throw new Error(`placeholder_tool_calls[${round}] must be an array of {tool, args}`);
  }
  return calls.map((call: unknown, i) => {
    const entry = call as { tool?: unknown; args?: unknown } | null;
    if (typeof entry?.tool !== 'string') {
      throw new Error(`placeholder_tool_calls[${round}][${i}] needs a tool name ('tool')`);
    }
    return {
      id: `placeholder_${round}_${i}`,
      name: entry.tool,
      arguments: JSON.stringify(entry.args ?? {}),
    };
  });
}

/** Roughly four characters per token, as providers count. */
function placeholderTokens(promptChars: number, outputChars: number): TokenUsage {
  const input = Math.ceil(promptChars / 4);
  const output = Math.ceil(outputChars / 4);
  // The placeholder spends no money: its cost is known, and 0.
  return { input, output, total: input + output, costUsd: 0 };
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}
