/**
 * The agent loop of an LLM step with `tools:` (issue 13 point 3): the model is offered the step's
 * tools in its provider's native tool-calling format; each tool call it makes runs through the
 * tool registry (deny by default, argument validation, the approval gate for high-risk tools)
 * and its result goes back to the model, until the model answers without calling a tool.
 *
 * Bounds (docs/tools.md, "Agent loop"): at most `maxRounds` rounds of tool calls — a model that still
 * calls tools after the last round fails the attempt with an error naming the bound (a
 * half-finished answer is not passed off as the step's result); at most `maxCallsPerRound` calls
 * run per round (the model's extra calls are answered with a refusal, which it sees); each result
 * is cut to `maxResultChars` characters plus a marker.
 *
 * Every call and result is an AgentMessage (`tool_call` / `tool_result`) in the step's record.
 */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../errors.js';
import type { AgentMessage } from '../generated/run-record.js';
import {
  addUsage,
  spentTokens,
  type ChatMessage,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
  type TokenUsage,
  type ToolCall,
  type ToolDefinition,
} from '../llm/types.js';
import { AgentFailure } from './types.js';

/** The loop's bounds (AGENTIC_AGENT_MAX_ROUNDS, …_MAX_CALLS_PER_ROUND, AGENTIC_TOOL_RESULT_MAX_CHARS). */
export interface AgentLoopLimits {
  maxRounds: number;
  maxCallsPerRound: number;
  maxResultChars: number;
}

export const DEFAULT_AGENT_LOOP_LIMITS: AgentLoopLimits = {
  maxRounds: 8,
  maxCallsPerRound: 12,
  maxResultChars: 12_000,
};

/** The limits set in tool options (the config's variables), defaults for the rest. */
export function agentLoopLimits(options: {
  agentMaxRounds?: number;
  agentMaxCallsPerRound?: number;
  toolResultMaxChars?: number;
}): AgentLoopLimits {
  return {
    maxRounds: options.agentMaxRounds ?? DEFAULT_AGENT_LOOP_LIMITS.maxRounds,
    maxCallsPerRound: options.agentMaxCallsPerRound ?? DEFAULT_AGENT_LOOP_LIMITS.maxCallsPerRound,
    maxResultChars: options.toolResultMaxChars ?? DEFAULT_AGENT_LOOP_LIMITS.maxResultChars,
  };
}

export interface AgentLoopOptions {
  llm: LlmClient;
  /** The step's request; its `prompt` opens the conversation. */
  request: Omit<LlmRequest, 'messages' | 'tools'>;
  tools: readonly ToolDefinition[];
  /** Runs one call through the tool registry; rejects with the tool error. */
  callTool(name: string, args: unknown): Promise<unknown>;
  /**
   * The registry name of each tool offered under another name (tool-wire-names.ts): calls are
   * run and recorded under the registry name. @default none: offered names are registry names
   */
  registryNames?: ReadonlyMap<string, string>;
  limits: AgentLoopLimits;
  /** The step's name: sender of the calls, recipient of the results. */
  step: string;
  now?: () => number;
}

export interface AgentLoopResult {
  /** The model's final answer (no tool calls). */
  response: LlmResponse;
  tokensUsed: TokenUsage | null;
  messages: AgentMessage[];
}

/** Runs the loop; rejects with an {@link AgentFailure} carrying the messages so far. */
export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const { llm, request, tools, limits, step } = options;
  const now = options.now ?? Date.now;
  const conversation: ChatMessage[] = [{ role: 'user', content: request.prompt }];
  const messages: AgentMessage[] = [];
  let tokens: TokenUsage | null = null;
  let model: string | null = null;
  const fail = (message: string, cause?: unknown): AgentFailure =>
    new AgentFailure(message, { messages, tokensUsed: tokens, modelUsed: model }, cause);
  for (let round = 1; ; round++) {
    let response: LlmResponse;
    try {
      response = await llm.complete({ ...request, messages: conversation, tools });
    } catch (error) {
      tokens = addUsage(tokens, spentTokens(error));
      throw fail(errorMessage(error), error);
    }
    tokens = addUsage(tokens, response.tokensUsed);
    model = response.model;
    const calls = response.toolCalls ?? [];
    if (calls.length === 0) return { response, tokensUsed: tokens, messages };
    if (round > limits.maxRounds) {
      throw fail(
        `agent loop: the model still called tools (${calls.map((c) => c.name).join(', ')}) after ${limits.maxRounds} rounds (AGENTIC_AGENT_MAX_ROUNDS)`,
      );
    }
    conversation.push({ role: 'assistant', content: response.text, toolCalls: calls });
    for (const [i, offered] of calls.entries()) {
      const call = { ...offered, name: options.registryNames?.get(offered.name) ?? offered.name };
      const sent = callMessage(step, call, round, now(), limits.maxResultChars);
      messages.push(sent);
      const startedAt = now();
      const answer =
        i < limits.maxCallsPerRound
          ? await runCall(options, call)
          : {
              outcome: 'refused' as const,
              text: errorText(
                `not run: at most ${limits.maxCallsPerRound} tool calls per round (AGENTIC_AGENT_MAX_CALLS_PER_ROUND)`,
              ),
            };
      if (request.signal.aborted) throw fail(errorMessage(request.signal.reason));
      const { text, truncated } = truncate(answer.text, limits.maxResultChars);
      messages.push({
        id: randomUUID(),
        type: 'tool_result',
        sender: call.name,
        recipient: step,
        content: text,
        metadata: {
          round,
          call_id: call.id,
          outcome: answer.outcome,
          truncated,
          duration_ms: Math.max(0, now() - startedAt),
        },
        timestamp: new Date(now()).toISOString(),
        parent_id: sent.id,
      });
      conversation.push({
        role: 'tool',
        content: text,
        toolCallId: call.id,
        name: offered.name,
        ...(answer.outcome === 'ok' ? {} : { isError: true }),
      });
    }
  }
}

/** One call: its JSON arguments parsed, run through the registry; a tool error is a result. */
async function runCall(
  options: AgentLoopOptions,
  call: ToolCall,
): Promise<{ outcome: 'ok' | 'error'; text: string }> {
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : (JSON.parse(call.arguments) as unknown);
  } catch {
    return { outcome: 'error', text: errorText(`tool ${call.name}: arguments are not valid JSON`) };
  }
  try {
    const result = await options.callTool(call.name, args);
    return { outcome: 'ok', text: typeof result === 'string' ? result : JSON.stringify(result) };
  } catch (error) {
    // The model sees why (a refusal, a denial, a failure) and may try something else.
    return { outcome: 'error', text: errorText(errorMessage(error)) };
  }
}

function callMessage(
  step: string,
  call: ToolCall,
  round: number,
  time: number,
  maxChars: number,
): AgentMessage {
  return {
    id: randomUUID(),
    type: 'tool_call',
    sender: step,
    recipient: call.name,
    content: { name: call.name, arguments: truncate(call.arguments, maxChars).text },
    metadata: { round, call_id: call.id },
    timestamp: new Date(time).toISOString(),
    parent_id: null,
  };
}

function errorText(message: string): string {
  return JSON.stringify({ error: message });
}

/** The first `max` characters of `text` and a marker saying how many were cut. */
export function truncate(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  return {
    text: `${text.slice(0, max)}\n[truncated: ${text.length - max} more characters]`,
    truncated: true,
  };
}
