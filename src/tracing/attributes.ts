/**
 * Span attribute names of the runtime's traces (docs/tracing.md). OpenTelemetry's semantic
 * conventions where one exists (HTTP, GenAI), `agentic.*` for the runtime's own notions.
 */
import type { Attributes, AttributeValue, Span } from '@opentelemetry/api';

export const ATTR = {
  RUN_ID: 'agentic.run.id',
  WORKFLOW: 'agentic.workflow',
  ADAPTER: 'agentic.adapter',
  STEP: 'agentic.step',
  AGENT: 'agentic.agent',
  STATUS: 'agentic.status',
  /** The attempt's number, from 1. */
  ATTEMPT: 'agentic.attempt',
  /** Retries before this attempt (attempt − 1). */
  RETRY: 'agentic.retry',
  STEP_COUNT: 'agentic.step_count',
  ERROR: 'agentic.error',
  SKIP_REASON: 'agentic.skip_reason',
  MODEL_USED: 'agentic.model_used',
  TIER: 'agentic.tier',
  /** USD of the call (or the step's calls) at the price table; absent when unknown. */
  COST_USD: 'agentic.llm.cost_usd',
  /** The part of the input tokens read from the provider's prompt cache. */
  CACHED_INPUT_TOKENS: 'agentic.llm.cached_input_tokens',
  /** Sensitive (AGENTIC_TRACE_SENSITIVE=1 only): the step's resolved inputs, as JSON. */
  STEP_INPUT: 'agentic.step.input',
  /** Sensitive: the step's output, as JSON. */
  STEP_OUTPUT: 'agentic.step.output',
  /** Sensitive: the system prompt and the prompt (or the chat messages, as JSON). */
  PROMPT: 'agentic.llm.prompt',
  SYSTEM_PROMPT: 'agentic.llm.system',
  /** Sensitive: the model's answer text. */
  COMPLETION: 'agentic.llm.completion',
  /** Sensitive: a tool call's arguments, as JSON. */
  TOOL_ARGUMENTS: 'agentic.tool.arguments',
  /** Sensitive: a tool call's result, as JSON. */
  TOOL_RESULT: 'agentic.tool.result',
  TOOL_OUTCOME: 'agentic.tool.outcome',
  /** How a WebSocket upgrade ended: `subscribed`, or why it was refused. */
  WS_OUTCOME: 'agentic.ws.outcome',
  /** The close code a WebSocket was refused with after its handshake. */
  WS_CLOSE_CODE: 'agentic.ws.close_code',
  GEN_AI_OPERATION: 'gen_ai.operation.name',
  GEN_AI_PROVIDER: 'gen_ai.provider.name',
  GEN_AI_REQUEST_MODEL: 'gen_ai.request.model',
  GEN_AI_RESPONSE_MODEL: 'gen_ai.response.model',
  GEN_AI_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  GEN_AI_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  GEN_AI_FINISH_REASON: 'gen_ai.response.finish_reasons',
  GEN_AI_TOOL_NAME: 'gen_ai.tool.name',
  ERROR_TYPE: 'error.type',
} as const;

/** Longest sensitive attribute value, in characters; longer ones are cut with a marker. */
export const MAX_SENSITIVE_CHARS = 8192;

/**
 * Sets a sensitive attribute when `sensitive` is on (strings as they are, anything else as
 * JSON), cut at {@link MAX_SENSITIVE_CHARS}. With `sensitive` off it does nothing, so callers
 * can pass values without checking (safety control 6 in one place).
 */
export function setSensitive(span: Span, sensitive: boolean, key: string, value: unknown): void {
  if (!sensitive || value === undefined) return;
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? typeof value);
  } catch {
    text = '[unserializable]';
  }
  span.setAttribute(
    key,
    text.length > MAX_SENSITIVE_CHARS ? `${text.slice(0, MAX_SENSITIVE_CHARS)}…[truncated]` : text,
  );
}

/** Attributes without the undefined entries (the API drops them, but tests compare objects). */
export function defined(attributes: Record<string, AttributeValue | undefined>): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
