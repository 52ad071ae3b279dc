/**
 * Anthropic Messages API (`POST /v1/messages`, `GET /v1/models`): system prompt apart,
 * `tool_use` / `tool_result` content blocks, streamed as typed SSE events
 * (`message_start`, `content_block_delta`, `message_delta`, ...).
 */
import type { HttpClient } from '../http.js';
import { LlmError, withSpentTokens } from '../llm-error.js';
import { readSseJson, type SseSource } from '../stream-reader.js';
import type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  Provider,
  TokenUsage,
  ToolCall,
} from '../types.js';
import { readOpenAiModels } from './openai.js';

export interface AnthropicOptions {
  http: HttpClient;
  baseUrl: string;
  apiKey: string;
}

/** `max_tokens` is required by the protocol; this is sent when the caller gives none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
const API_VERSION = '2023-06-01';

interface Block {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

interface AnthropicMessage {
  model?: string;
  content?: Block[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

interface StreamEvent {
  type?: string;
  message?: AnthropicMessage;
  index?: number;
  content_block?: Block;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** A {@link Provider} speaking the Anthropic Messages API. */
export function createAnthropicProvider(options: AnthropicOptions): Provider {
  const name = 'anthropic';
  const headers = { 'x-api-key': options.apiKey, 'anthropic-version': API_VERSION };
  return {
    name,
    async chat(request) {
      const req = {
        method: 'POST' as const,
        url: `${options.baseUrl}/v1/messages`,
        headers,
        body: requestBody(request),
        signal: request.signal,
      };
      if (request.onDelta === undefined) {
        return readAnswer(request.model, (await options.http.json(req)) as AnthropicMessage);
      }
      return readStream(request, await options.http.send(req));
    },
    async listModels(signal) {
      const answer = await options.http.json({
        method: 'GET',
        url: `${options.baseUrl}/v1/models`,
        headers,
        signal,
      });
      return readOpenAiModels(answer);
    },
  };
}

function requestBody(request: ChatRequest): Record<string, unknown> {
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages: toWireMessages(request.messages),
  };
  if (system !== '') body.system = system;
  if (request.temperature !== undefined) body.temperature = Math.min(1, request.temperature);
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
  }
  if (request.onDelta !== undefined) body.stream = true;
  return body;
}

/** Tool results travel as `user` turns of `tool_result` blocks; consecutive ones merge. */
function toWireMessages(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  const out: { role: string; content: unknown[] }[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks: unknown[] = [];
    if (message.role === 'tool') {
      blocks.push({
        type: 'tool_result',
        tool_use_id: message.toolCallId ?? '',
        content: message.content,
        ...(message.isError === true ? { is_error: true } : {}),
      });
    } else {
      if (message.content !== '') blocks.push({ type: 'text', text: message.content });
      for (const call of message.toolCalls ?? []) {
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: parseArgs(call.arguments),
        });
      }
    }
    const last = out[out.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text === '' ? '{}' : text);
  } catch {
    return {};
  }
}

/** `ping` events are Anthropic's keep-alives: they do not reset the idle timeout. */
function isPing(payload: unknown): boolean {
  return (payload as StreamEvent | null)?.type === 'ping';
}

function readAnswer(model: string, answer: AnthropicMessage): ChatResult {
  if (!Array.isArray(answer.content)) {
    throw new LlmError('transient', 'answer without content', { provider: 'anthropic' });
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of answer.content) {
    if (block.type === 'text') text += block.text ?? '';
    if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id ?? '',
        name: block.name ?? '',
        arguments: JSON.stringify(block.input ?? {}),
      });
    }
  }
  return {
    text,
    model: answer.model ?? model,
    usage: usageOf(answer.usage ?? {}),
    finishReason: answer.stop_reason ?? 'end_turn',
    toolCalls,
  };
}

async function readStream(request: ChatRequest, answer: SseSource): Promise<ChatResult> {
  const onDelta = request.onDelta ?? (() => undefined);
  let text = '';
  let model = request.model;
  // Each of `message_start` and `message_delta` reports some counts; the later one wins per count.
  const counts: AnthropicUsage = {};
  const take = (reported: AnthropicUsage | undefined): void => {
    for (const [key, value] of Object.entries(reported ?? {})) {
      if (typeof value === 'number') counts[key as keyof AnthropicUsage] = value;
    }
  };
  let finishReason: string | undefined;
  let stopped = false;
  const calls = new Map<number, ToolCall>();
  try {
    await readSseJson('anthropic', answer, onEvent, isPing);
  } catch (error) {
    // `message_start` and `message_delta` report usage before a failure: those tokens were spent.
    throw withSpentTokens(error, usageOf(counts));
  }
  function onEvent(payload: unknown): void {
    const event = payload as StreamEvent;
    switch (event.type) {
      case 'message_start':
        model = event.message?.model ?? model;
        take(event.message?.usage);
        break;
      case 'content_block_start':
        if (event.content_block?.type === 'tool_use') {
          calls.set(event.index ?? 0, {
            id: event.content_block.id ?? '',
            name: event.content_block.name ?? '',
            arguments: '',
          });
        }
        break;
      case 'content_block_delta':
        if (event.delta?.type === 'text_delta' && typeof event.delta.text === 'string') {
          text += event.delta.text;
          if (event.delta.text !== '') onDelta(event.delta.text);
        } else if (event.delta?.type === 'input_json_delta') {
          const call = calls.get(event.index ?? 0);
          if (call !== undefined) call.arguments += event.delta.partial_json ?? '';
        }
        break;
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') finishReason = event.delta.stop_reason;
        take(event.usage);
        break;
      case 'message_stop':
        stopped = true;
        break;
      case 'error':
        // Mid-stream errors (`overloaded_error`, `api_error`) are the provider's, not ours.
        throw new LlmError(
          'transient',
          `stream error: ${event.error?.message ?? event.error?.type ?? 'unknown'}`,
          { provider: 'anthropic' },
        );
      case undefined:
      default:
        break;
    }
  }
  if (!stopped) {
    throw new LlmError('transient', 'stream ended before message_stop', { provider: 'anthropic' });
  }
  return {
    text,
    model,
    usage: usageOf(counts),
    finishReason: finishReason ?? 'end_turn',
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
  };
}

/**
 * Anthropic's `input_tokens` leaves out the tokens read from and written to the prompt cache;
 * `input` counts every input token (as OpenAI and Gemini do), `cached` and `cacheWrite` the
 * cache's part of them, so each is priced at its own rate (src/llm/prices.ts).
 */
function usageOf(reported: AnthropicUsage): TokenUsage {
  const cached = reported.cache_read_input_tokens ?? 0;
  const cacheWrite = reported.cache_creation_input_tokens ?? 0;
  const input = (reported.input_tokens ?? 0) + cached + cacheWrite;
  const output = reported.output_tokens ?? 0;
  return {
    input,
    output,
    total: input + output,
    ...(cached > 0 ? { cached } : {}),
    ...(cacheWrite > 0 ? { cacheWrite } : {}),
  };
}
