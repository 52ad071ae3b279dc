/**
 * OpenAI-compatible chat completions (`POST {base}/chat/completions`): OpenAI, Azure OpenAI,
 * GitHub Models and local servers (Ollama's `/v1`, vLLM, LM Studio, llama.cpp server). They
 * differ only in URLs and the auth header, given as options.
 */
import { readJson, type HttpClient } from '../http.js';
import { LlmError, withSpentTokens } from '../llm-error.js';
import { readSseJson, type SseSource } from '../stream-reader.js';
import type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  EmbedRequest,
  Provider,
  ToolCall,
} from '../types.js';

export interface OpenAiCompatibleOptions {
  /** The model-id prefix (`openai`, `azure`, `github`, `ollama`, ...). */
  name: string;
  http: HttpClient;
  /** Chat completions URL of a model. */
  chatUrl: (model: string) => string;
  /** Model list URL and how to read its answer. */
  modelsUrl: string;
  readModels?: (answer: unknown) => string[];
  /** Auth headers (`authorization: Bearer …`, Azure's `api-key`); none for local servers. */
  headers: Record<string, string>;
  /** Send `stream_options.include_usage`. @default true */
  streamUsage?: boolean;
  /** Its model list names every model it serves (see {@link Provider.listsEveryModel}). */
  listsEveryModel?: boolean;
  /** Embeddings URL of a model (`POST {base}/embeddings`); none: the provider cannot embed. */
  embeddingsUrl?: (model: string) => string;
}

interface OpenAiToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface OpenAiChoice {
  message?: { content?: string | null; tool_calls?: OpenAiToolCall[] };
  delta?: { content?: string | null; tool_calls?: OpenAiToolCall[] };
  finish_reason?: string | null;
}

interface OpenAiAnswer {
  model?: string;
  choices?: OpenAiChoice[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    /** `cached_tokens`: the part of prompt_tokens read from the prompt cache. */
    prompt_tokens_details?: { cached_tokens?: number | null } | null;
  } | null;
  error?: { message?: string };
}

/** A {@link Provider} speaking OpenAI chat completions at the given URLs. */
export function createOpenAiCompatibleProvider(options: OpenAiCompatibleOptions): Provider {
  const { name, http } = options;
  return {
    name,
    ...(options.listsEveryModel === true ? { listsEveryModel: true } : {}),
    async chat(request) {
      const body = requestBody(request, options.streamUsage ?? true);
      const base = {
        method: 'POST' as const,
        url: options.chatUrl(request.model),
        headers: options.headers,
        body,
        signal: request.signal,
      };
      if (request.onDelta === undefined) {
        return readAnswer(name, request.model, (await http.json(base)) as OpenAiAnswer);
      }
      const answer = await http.send(base);
      // Servers that ignore `stream: true` answer with one JSON completion.
      if (answer.contentType === 'application/json') {
        const whole = readAnswer(
          name,
          request.model,
          (await readJson(name, answer.body, answer.maxAnswerBytes)) as OpenAiAnswer,
        );
        if (whole.text !== '') request.onDelta(whole.text);
        return whole;
      }
      return readStream(name, request, answer);
    },
    ...(options.embeddingsUrl === undefined
      ? {}
      : {
          async embed(request: EmbedRequest): Promise<number[][]> {
            const answer = (await http.json({
              method: 'POST',
              url: options.embeddingsUrl!(request.model),
              headers: options.headers,
              body: { model: request.model, input: request.input },
              signal: request.signal,
            })) as { data?: { index?: number; embedding?: unknown }[] } | null;
            const data = answer?.data;
            if (!Array.isArray(data) || data.length !== request.input.length) {
              throw new LlmError('transient', 'embeddings answer without one vector per input', {
                provider: name,
              });
            }
            // `index` says which input a vector belongs to; servers may answer out of order.
            return [...data]
              .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
              .map((entry) => vectorOf(name, entry.embedding));
          },
        }),
    async listModels(signal) {
      const answer = await http.json({
        method: 'GET',
        url: options.modelsUrl,
        headers: options.headers,
        signal,
      });
      return (options.readModels ?? readOpenAiModels)(answer);
    },
  };
}

/** A vector of numbers from an embeddings answer, or a transient error naming the provider. */
export function vectorOf(provider: string, value: unknown): number[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((x) => typeof x === 'number')) {
    throw new LlmError('transient', 'embeddings answer with a malformed vector', { provider });
  }
  return value;
}

/** `{data: [{id}]}`. */
export function readOpenAiModels(answer: unknown): string[] {
  const data = (answer as { data?: { id?: unknown }[] } | null)?.data;
  if (!Array.isArray(data)) return [];
  return data.map((entry) => entry.id).filter((id): id is string => typeof id === 'string');
}

function requestBody(request: ChatRequest, streamUsage: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: request.messages.map(toWireMessage),
  };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.json === true) body.response_format = { type: 'json_object' };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (request.onDelta !== undefined) {
    body.stream = true;
    if (streamUsage) body.stream_options = { include_usage: true };
  }
  return body;
}

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === 'tool') {
    return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
  }
  const wire: Record<string, unknown> = { role: message.role, content: message.content };
  if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
    wire.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return wire;
}

function usageOf(answer: OpenAiAnswer): ChatResult['usage'] {
  const input = answer.usage?.prompt_tokens ?? 0;
  const output = answer.usage?.completion_tokens ?? 0;
  const cached = answer.usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input,
    output,
    total: answer.usage?.total_tokens ?? input + output,
    ...(cached > 0 ? { cached } : {}),
  };
}

function readAnswer(provider: string, model: string, answer: OpenAiAnswer): ChatResult {
  const choice = answer.choices?.[0];
  if (choice?.message === undefined) {
    throw new LlmError('transient', `answer without a message${errorSuffix(answer)}`, { provider });
  }
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, i) => ({
    id: call.id ?? `call_${i}`,
    name: call.function?.name ?? '',
    arguments: call.function?.arguments ?? '',
  }));
  return {
    text: choice.message.content ?? '',
    model: answer.model ?? model,
    usage: usageOf(answer),
    finishReason: choice.finish_reason ?? 'stop',
    toolCalls,
  };
}

async function readStream(
  provider: string,
  request: ChatRequest,
  answer: SseSource,
): Promise<ChatResult> {
  const onDelta = request.onDelta ?? (() => undefined);
  let text = '';
  let model = request.model;
  let usage: ChatResult['usage'] = { input: 0, output: 0, total: 0 };
  let finishReason: string | undefined;
  const calls = new Map<number, ToolCall>();
  let ended: { done: boolean };
  try {
    ended = await readSseJson(provider, answer, onChunk);
  } catch (error) {
    // A usage chunk may come before the failure (a reset before `[DONE]`): its tokens were spent.
    throw withSpentTokens(error, usage);
  }
  const { done } = ended;
  function onChunk(payload: unknown): void {
    const chunk = payload as OpenAiAnswer;
    if (chunk.error !== undefined) {
      throw new LlmError('transient', `stream error: ${chunk.error.message ?? 'unknown'}`, {
        provider,
      });
    }
    if (typeof chunk.model === 'string' && chunk.model !== '') model = chunk.model;
    if (chunk.usage !== undefined && chunk.usage !== null) usage = usageOf(chunk);
    const choice = chunk.choices?.[0];
    if (choice === undefined) return;
    const content = choice.delta?.content;
    if (typeof content === 'string' && content !== '') {
      text += content;
      onDelta(content);
    }
    for (const part of choice.delta?.tool_calls ?? []) {
      const index = part.index ?? 0;
      const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (part.id !== undefined) call.id = part.id;
      if (part.function?.name !== undefined) call.name += part.function.name;
      if (part.function?.arguments !== undefined) call.arguments += part.function.arguments;
      calls.set(index, call);
    }
    if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
  }
  if (!done && finishReason === undefined) {
    throw new LlmError('transient', 'stream ended before the answer was complete', { provider });
  }
  return {
    text,
    model,
    usage,
    finishReason: finishReason ?? 'stop',
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
  };
}

function errorSuffix(answer: OpenAiAnswer): string {
  return answer.error?.message === undefined ? '' : `: ${answer.error.message}`;
}
