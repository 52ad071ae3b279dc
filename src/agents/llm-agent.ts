import { parseAgentName } from './agent-names.js';
import type { LlmClient } from '../llm/types.js';
import type { Agent } from './types.js';

/** The persona and description of a role, from the agent catalogue. */
export interface RoleProfile {
  persona?: string;
  description?: string;
}

export interface LlmAgentOptions {
  llm: LlmClient;
  /** The role's catalogue entry; undefined when the role is not in the catalogue. */
  profile: (role: string) => RoleProfile | undefined;
  /** Output keys expected of a step (see `expectedOutputKeys`). */
  outputKeys: (stepName: string) => readonly string[];
}

/**
 * The agent behind every `tier{1-5}_{role}` step: builds a system prompt from the role's persona
 * and a user prompt from the step's description and inputs, and calls the LLM client with the
 * step's tier, pinned model and abort signal. Output: `{raw_response, ...fields}` where fields
 * come from the client or from a JSON object answer.
 */
export function createLlmAgent(options: LlmAgentOptions): Agent {
  return async ({ step, input, signal }) => {
    const parsed = parseAgentName(step.agent);
    const role = parsed?.role ?? step.agent;
    const profile = options.profile(role);
    const system =
      profile?.persona ??
      `You are the ${role.replace(/_/g, ' ')} agent. ${profile?.description ?? ''}`.trim();
    const response = await options.llm.complete({
      tier: parsed?.tier ?? step.tier,
      ...(step.model === undefined ? {} : { model: step.model }),
      system,
      prompt: buildPrompt(step.description, input),
      outputKeys: options.outputKeys(step.name),
      signal,
    });
    return {
      output: { ...jsonObject(response.text), ...response.fields, raw_response: response.text },
      modelUsed: response.model,
      tokensUsed: response.tokensUsed,
    };
  };
}

function buildPrompt(description: string, input: Record<string, unknown>): string {
  const parts: string[] = [];
  if (description !== '') parts.push(description);
  for (const [key, value] of Object.entries(input)) {
    parts.push(`## ${key}\n${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}`);
  }
  return parts.join('\n\n');
}

/** The answer's fields when the model answered with a JSON object, else nothing. */
function jsonObject(text: string): Record<string, unknown> {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return {};
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
