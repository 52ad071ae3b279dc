/**
 * The model-call contracts. `LlmClient` is what LLM agents call (the tier router, the no-LLM
 * placeholder client and an embedding app's own client implement it); `Provider` is one
 * vendor's wire protocol behind the router.
 */

/** Tokens of one call (or summed over a step's attempts). */
export interface TokenUsage {
  /** Every input token, those read from or written to the prompt cache included. */
  input: number;
  output: number;
  total: number;
  /**
   * Input tokens read from the provider's prompt cache (a part of `input`): OpenAI's
   * `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`, Gemini's
   * `cachedContentTokenCount`. Absent: none reported.
   */
  cached?: number;
  /** Input tokens written to the prompt cache (a part of `input`; Anthropic's `cache_creation_input_tokens`). */
  cacheWrite?: number;
  /**
   * What these tokens cost in USD at the price table (src/llm/prices.ts), summed with them by
   * {@link addUsage} so that a step's or a run's cost always covers exactly its tokens. Null
   * (or absent): some of the tokens were spent on a model without a price, never guessed.
   */
  costUsd?: number | null;
}

/** A chat message. `tool` messages answer a tool call of the previous assistant message. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Tool calls the assistant made (assistant messages). */
  toolCalls?: readonly ToolCall[];
  /** The call this message answers (tool messages). */
  toolCallId?: string;
  /** The tool's name (tool messages; Gemini needs it). */
  name?: string;
  /** The tool call failed or was refused (tool messages; Anthropic's `is_error`). */
  isError?: boolean;
}

/** A tool the model may call: name, description and JSON Schema of its arguments. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call the model made; `arguments` is the JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One request to a provider. */
export interface ChatRequest {
  /** The provider's model name (without the `provider:` prefix). */
  model: string;
  messages: readonly ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  tools?: readonly ToolDefinition[];
  /** Ask for a JSON object answer where the protocol has a switch for it. */
  json?: boolean;
  /** Aborts the HTTP request (run cancellation, timeouts, a chat client gone). */
  signal: AbortSignal;
  /** Streams the answer: called with each text chunk as it arrives. Absent: one response. */
  onDelta?: (text: string) => void;
}

/** One provider answer. */
export interface ChatResult {
  text: string;
  /** The model as the provider named it in its answer (or the requested one). */
  model: string;
  usage: TokenUsage;
  /** `stop`, `length`, `tool_calls`, ... in the provider's words. */
  finishReason: string;
  toolCalls: ToolCall[];
}

/** One request to a provider's embeddings endpoint. */
export interface EmbedRequest {
  /** The provider's model name (without the `provider:` prefix). */
  model: string;
  input: readonly string[];
  signal: AbortSignal;
}

/** One vendor's wire protocol. Rejects with an `LlmError` on failure. */
export interface Provider {
  /** The prefix of model ids (`openai`, `anthropic`, `ollama`, ...). */
  readonly name: string;
  chat(request: ChatRequest): Promise<ChatResult>;
  /**
   * One vector per input, in order, from the provider's embeddings endpoint; absent when the
   * protocol has none (Anthropic).
   */
  embed?(request: EmbedRequest): Promise<number[][]>;
  /** The provider's model list (the probe); spends no tokens. */
  listModels(signal: AbortSignal): Promise<string[]>;
  /**
   * Its model list names every model it serves (Ollama: the models pulled; OpenAI and the
   * servers set by OPENAI_BASE_URL), so after a probe a tier chain skips the models it does not
   * list. Absent: the list may leave some out (Anthropic's `-latest` aliases, Azure deployments).
   */
  readonly listsEveryModel?: boolean;
}

/** One completion request of an LLM step or a chat. */
export interface LlmRequest {
  /** Model tier 1–5 (from the agent name `tierN_role`). */
  tier: number;
  /** A pinned model id `provider:model` (step `model:`, chat `model`); the tier's chain when absent. */
  model?: string;
  /** The system prompt (the role's persona). */
  system: string;
  /** The user prompt built from the step's inputs. */
  prompt: string;
  /** Output keys the step is expected to produce (declared or referenced by the workflow). */
  outputKeys?: readonly string[];
  /** Earlier turns (chat); when given, `prompt` is ignored and these are sent after `system`. */
  messages?: readonly ChatMessage[];
  temperature?: number;
  /** Output tokens the answer may have (sent as the call's max_tokens). @default the provider's */
  maxTokens?: number;
  tools?: readonly ToolDefinition[];
  /** Ask for a JSON object answer. */
  json?: boolean;
  /** Aborts the call (run cancellation, run timeout, step timeout). */
  signal: AbortSignal;
  /** Streams the answer chunk by chunk. */
  onDelta?: (text: string) => void;
  /** Called with the model id each time the router tries a candidate (chat's `route` frame). */
  onRoute?: (model: string) => void;
  /**
   * Called as the router starts each provider call (every candidate it tries, and the same
   * candidate again after a Retry-After wait) with the candidate's id; the function returned
   * is told how that call ended. Tracing makes a span per provider call with it. A client
   * without candidates (the no-LLM placeholder) never calls it.
   */
  onAttempt?: (model: string) => (outcome: LlmAttemptOutcome) => void;
  /**
   * The tool calls the no-LLM placeholder makes (a step's `placeholder_tool_calls` input: one
   * array of `{tool, args}` per round); read by the no-LLM client only, never sent to a provider.
   */
  script?: unknown;
  /** The run and step making the call (a step's model-call span is a child of its attempt's). */
  caller?: LlmCaller;
}

/** How one provider call of the router ended: the answer it gave, or its error. */
export type LlmAttemptOutcome = { response: LlmResponse } | { error: unknown };

/** Who makes a model call: a run's step. */
export interface LlmCaller {
  runId: string;
  step: string;
}

/** One completion. */
export interface LlmResponse {
  text: string;
  /** The model that actually answered (`provider:model`). */
  model: string;
  tokensUsed: TokenUsage;
  /** Structured fields produced alongside the text (merged into the step output). */
  fields?: Record<string, unknown>;
  finishReason?: string;
  toolCalls?: ToolCall[];
}

/** Something that completes prompts. Implementations reject on failure (a failed step). */
export interface LlmClient {
  complete(request: LlmRequest): Promise<LlmResponse>;
}

/**
 * Tokens a failed model call had spent: what the provider reported before the failure (a
 * stream's `usage` chunk before a connection reset), summed over the candidates the router
 * tried. Read from the error's `spentTokens` ({@link LlmError}); null when it reported none.
 */
export function spentTokens(error: unknown): TokenUsage | null {
  if (typeof error !== 'object' || error === null) return null;
  const spent = (error as { spentTokens?: TokenUsage | null }).spentTokens;
  return spent ?? null;
}

/**
 * Adds two usages (a step's attempts or loop iterations). The cost is the sum of both costs,
 * null when either is unknown: a sum over an unpriced call is not the cost.
 */
export function addUsage(a: TokenUsage | null, b: TokenUsage | null): TokenUsage | null {
  if (a === null) return b;
  if (b === null) return a;
  const cached = (a.cached ?? 0) + (b.cached ?? 0);
  const cacheWrite = (a.cacheWrite ?? 0) + (b.cacheWrite ?? 0);
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    total: a.total + b.total,
    ...(cached > 0 ? { cached } : {}),
    ...(cacheWrite > 0 ? { cacheWrite } : {}),
    // Absent on both (a client that prices nothing): left absent, which reads as unknown.
    ...(a.costUsd === undefined && b.costUsd === undefined
      ? {}
      : { costUsd: addCost(a.costUsd ?? null, b.costUsd ?? null) }),
  };
}

/** The sum of two costs in USD; null when either is unknown. */
export function addCost(a: number | null, b: number | null): number | null {
  if (a === null || b === null) return null;
  // Rounded like a call's cost: floating-point noise would otherwise grow with every sum.
  return Math.round((a + b) * 1e11) / 1e11;
}
