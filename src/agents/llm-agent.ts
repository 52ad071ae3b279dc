import { parseAgentName } from './agent-names.js';
import type { LlmClient } from '../llm/types.js';
import { outputsFromAnswer } from './llm-answer.js';
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
 * The agent behind every `tier{1-5}_{role}` step. System prompt: the role's persona. User
 * prompt: the step's description, its resolved inputs (never the rest of the run context) and
 * the output keys to answer with. The call goes through the LLM client (the tier router) with
 * the step's tier, pinned model and abort signal, streaming chunks to `token_delta` events.
 * Output: the JSON answer's fields plus `raw_response`; an answer that cannot fill a declared
 * output fails the attempt.
 */
export function createLlmAgent(options: LlmAgentOptions): Agent {
  return async (request) => {
    const { step, input, signal } = request;
    const parsed = parseAgentName(step.agent);
    const role = parsed?.role ?? step.agent;
    const profile = options.profile(role);
    const system =
      profile?.persona ??
      `You are the ${role.replace(/_/g, ' ')} agent. ${profile?.description ?? ''}`.trim();
    const keys = options.outputKeys(step.name);
    const response = await options.llm.complete({
      tier: parsed?.tier ?? Number(step.tier),
      ...(step.model === undefined ? {} : { model: step.model }),
      system,
      prompt: buildPrompt(step.description, input, keys),
      outputKeys: keys,
      ...(keys.length > 0 ? { json: true } : {}),
      signal,
      caller: { runId: request.runId, step: step.name },
      ...(request.emitDelta === undefined
        ? {}
        : { onDelta: (text: string) => request.emitDelta?.(text) }),
    });
    return {
      output: outputsFromAnswer(response.text, response.fields, Object.keys(step.outputs)),
      modelUsed: response.model,
      tokensUsed: response.tokensUsed,
    };
  };
}

/** The user prompt: description, inputs, and the answer format when outputs are expected. */
export function buildPrompt(
  description: string,
  input: Record<string, unknown>,
  outputKeys: readonly string[],
): string {
  const parts: string[] = [];
  if (description !== '') parts.push(description);
  for (const [key, value] of Object.entries(input)) {
    parts.push(`## ${key}\n${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}`);
  }
  if (outputKeys.length > 0) {
    parts.push(
      `Answer with one JSON object whose keys are ${outputKeys.map((key) => JSON.stringify(key)).join(', ')}.`,
    );
  }
  return parts.join('\n\n');
}
