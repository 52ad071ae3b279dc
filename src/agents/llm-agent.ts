import { parseAgentName } from '../workflow/agent-names.js';
import {
  spentTokens,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
  type ToolDefinition,
} from '../llm/types.js';
import type { ToolKit } from '../tools/index.js';
import { runAgentLoop, type AgentLoopLimits, DEFAULT_AGENT_LOOP_LIMITS } from './agent-loop.js';
import { outputsFromAnswer } from './llm-answer.js';
import { wireToolNames } from './tool-wire-names.js';
import { errorMessage } from '../errors.js';
import { AgentFailure, type Agent, type AgentRequest, type AgentResult } from './types.js';

/**
 * The step input the no-LLM placeholder reads its tool calls from (docs/tools.md, "Agent loop"); it is
 * never part of the prompt.
 */
export const PLACEHOLDER_SCRIPT_INPUT = 'placeholder_tool_calls';

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
  /** The workflow's name (the tool caller). */
  workflow?: string;
  /** The runtime's tools, for steps with `tools:`; without them every tool call is refused. */
  tools?: () => Promise<ToolKit>;
  /** Bounds of the agent loop. @default DEFAULT_AGENT_LOOP_LIMITS */
  loopLimits?: AgentLoopLimits;
}

/**
 * The agent behind every `tier{1-5}_{role}` step. System prompt: the role's persona. User
 * prompt: the step's description, its resolved inputs (never the rest of the run context) and
 * the output keys to answer with. The call goes through the LLM client (the tier router) with
 * the step's tier, pinned model and abort signal, streaming chunks to `token_delta` events.
 * Output: the JSON answer's fields plus `raw_response`; an answer that cannot fill a declared
 * output fails the attempt. A step with `tools:` runs the agent loop (`agent-loop.ts`) and
 * records its tool calls and results as the attempt's messages.
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
    const { [PLACEHOLDER_SCRIPT_INPUT]: script, ...promptInput } = input;
    const llmRequest: Omit<LlmRequest, 'messages' | 'tools'> = {
      tier: parsed?.tier ?? Number(step.tier),
      ...(step.model === undefined ? {} : { model: step.model }),
      system,
      prompt: buildPrompt(step.description, promptInput, keys),
      outputKeys: keys,
      ...(keys.length > 0 ? { json: true } : {}),
      ...(script === undefined ? {} : { script }),
      signal,
      caller: { runId: request.runId, step: step.name },
      ...(request.emitDelta === undefined
        ? {}
        : { onDelta: (text: string) => request.emitDelta?.(text) }),
    };
    if (step.tools.length > 0) return withTools(options, request, llmRequest);
    let response: LlmResponse;
    try {
      response = await options.llm.complete(llmRequest);
    } catch (error) {
      // The call failed after the provider reported tokens: the attempt's record keeps them.
      const spent = spentTokens(error);
      if (spent === null) throw error;
      throw new AgentFailure(
        errorMessage(error),
        { messages: [], tokensUsed: spent, modelUsed: null },
        error,
      );
    }
    let output: Record<string, unknown>;
    try {
      output = outputsFromAnswer(response.text, response.fields, Object.keys(step.outputs));
    } catch (error) {
      // The model answered: the failed attempt's record keeps its model and the tokens it spent.
      throw new AgentFailure(
        errorMessage(error),
        { messages: [], tokensUsed: response.tokensUsed, modelUsed: response.model },
        error,
      );
    }
    return { output, modelUsed: response.model, tokensUsed: response.tokensUsed };
  };
}

/** A step with `tools:`: the agent loop over the step's tools (see `agent-loop.ts`). */
async function withTools(
  options: LlmAgentOptions,
  request: AgentRequest,
  llmRequest: Omit<LlmRequest, 'messages' | 'tools'>,
): Promise<AgentResult> {
  const { step } = request;
  if (options.tools === undefined)
    throw new Error(`step '${step.name}': this runtime has no tools`);
  const kit = await options.tools();
  const wire = wireToolNames(step.tools);
  // An MCP server that cannot be reached fails the attempt here, naming the server: its tools'
  // schemas are needed to offer them.
  const definitions: ToolDefinition[] = await Promise.all(
    [...wire].map(async ([offered, name]) => {
      const tool = await kit.registry.find(name);
      if (tool === undefined) throw new Error(`step '${step.name}': no tool '${name}'`);
      return { name: offered, description: tool.description, parameters: tool.parameters };
    }),
  );
  const caller = {
    workflow: options.workflow ?? '',
    step: step.name,
    runId: request.runId,
    allowed: step.tools,
  };
  const loop = await runAgentLoop({
    llm: options.llm,
    request: llmRequest,
    tools: definitions,
    callTool: (name, args) =>
      kit.call(name, args, caller, request.signal, (waiting) => request.onApproval?.(waiting)),
    registryNames: wire,
    limits: options.loopLimits ?? DEFAULT_AGENT_LOOP_LIMITS,
    step: step.name,
  });
  let output: Record<string, unknown>;
  try {
    output = outputsFromAnswer(loop.response.text, loop.response.fields, Object.keys(step.outputs));
  } catch (error) {
    // The calls happened: the failed attempt's record keeps them.
    throw new AgentFailure(
      errorMessage(error),
      { messages: loop.messages, tokensUsed: loop.tokensUsed, modelUsed: loop.response.model },
      error,
    );
  }
  return {
    output,
    modelUsed: loop.response.model,
    tokensUsed: loop.tokensUsed,
    messages: loop.messages,
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
