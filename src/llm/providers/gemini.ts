/**
 * Google Gemini (`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`,
 * `GET /v1beta/models`): `contents` of `user`/`model` turns with `parts`, `systemInstruction`,
 * `functionDeclarations` / `functionCall` / `functionResponse`, JSON through
 * `responseMimeType`.
 */
import type { HttpClient } from '../http.js';
import { LlmError, withSpentTokens } from '../llm-error.js';
import { readSseJson } from '../stream-reader.js';
import { vectorOf } from './openai.js';
import type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  Provider,
  TokenUsage,
  ToolCall,
} from '../types.js';

export interface GeminiOptions {
  http: HttpClient;
  baseUrl: string;
  apiKey: string;
}

interface Part {
  text?: string;
  functionCall?: { name?: string; args?: unknown };
}

interface GeminiAnswer {
  candidates?: { content?: { parts?: Part[] }; finishReason?: string }[];
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    totalTokenCount?: number;
    /** The part of promptTokenCount read from the context cache. */
    cachedContentTokenCount?: number;
    /** A thinking model's thoughts: billed as output, left out of candidatesTokenCount. */
    thoughtsTokenCount?: number;
  };
  modelVersion?: string;
  error?: { message?: string };
}

/** A {@link Provider} speaking the Gemini API (`v1beta`). */
export function createGeminiProvider(options: GeminiOptions): Provider {
  const name = 'gemini';
  const headers = { 'x-goog-api-key': options.apiKey };
  const modelUrl = (model: string): string =>
    `${options.baseUrl}/v1beta/models/${encodeURIComponent(model)}`;
  return {
    name,
    async chat(request) {
      const streaming = request.onDelta !== undefined;
      const req = {
        method: 'POST' as const,
        url: streaming
          ? `${modelUrl(request.model)}:streamGenerateContent?alt=sse`
          : `${modelUrl(request.model)}:generateContent`,
        headers,
        body: requestBody(request),
        signal: request.signal,
      };
      if (!streaming) {
        const result = new Accumulator(request.model);
        result.add((await options.http.json(req)) as GeminiAnswer, undefined);
        return result.finish(true);
      }
      const result = new Accumulator(request.model);
      const answer = await options.http.send(req);
      try {
        await readSseJson(name, answer, (payload) => {
          result.add(payload as GeminiAnswer, request.onDelta);
        });
      } catch (error) {
        // Each chunk's usageMetadata counts the tokens so far: those were spent.
        throw withSpentTokens(error, result.spent());
      }
      return result.finish(false);
    },
    async embed(request) {
      const answer = (await options.http.json({
        method: 'POST',
        url: `${modelUrl(request.model)}:batchEmbedContents`,
        headers,
        body: {
          requests: request.input.map((text) => ({
            model: `models/${request.model}`,
            content: { parts: [{ text }] },
          })),
        },
        signal: request.signal,
      })) as { embeddings?: { values?: unknown }[] } | null;
      const embeddings = answer?.embeddings;
      if (!Array.isArray(embeddings) || embeddings.length !== request.input.length) {
        throw new LlmError('transient', 'embeddings answer without one vector per input', {
          provider: name,
        });
      }
      return embeddings.map((entry) => vectorOf(name, entry.values));
    },
    async listModels(signal) {
      const answer = (await options.http.json({
        method: 'GET',
        url: `${options.baseUrl}/v1beta/models`,
        headers,
        signal,
      })) as { models?: { name?: unknown }[] } | null;
      const models = answer?.models;
      if (!Array.isArray(models)) return [];
      return models
        .map((m) => m.name)
        .filter((n): n is string => typeof n === 'string')
        .map((n) => n.replace(/^models\//, ''));
    },
  };
}

function requestBody(request: ChatRequest): Record<string, unknown> {
  const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const body: Record<string, unknown> = { contents: toContents(request.messages) };
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  const generation: Record<string, unknown> = {};
  if (request.temperature !== undefined) generation.temperature = request.temperature;
  if (request.maxTokens !== undefined) generation.maxOutputTokens = request.maxTokens;
  // Gemini refuses a JSON mime type together with function calling; the prompt still asks for
  // a JSON object, which the answer reader finds in the text.
  const tools = request.tools !== undefined && request.tools.length > 0;
  if (request.json === true && !tools) generation.responseMimeType = 'application/json';
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
        })),
      },
    ];
  }
  return body;
}

function toContents(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  const out: { role: string; parts: unknown[] }[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'model' : 'user';
    const parts: unknown[] = [];
    if (message.role === 'tool') {
      parts.push({
        functionResponse: { name: message.name ?? '', response: { content: message.content } },
      });
    } else {
      if (message.content !== '') parts.push({ text: message.content });
      for (const call of message.toolCalls ?? []) {
        parts.push({ functionCall: { name: call.name, args: parseArgs(call.arguments) } });
      }
    }
    const last = out[out.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
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

/** Gemini streams whole response objects; usage in each is the running total. */
class Accumulator {
  private text = '';
  private model: string;
  private usage: TokenUsage = { input: 0, output: 0, total: 0 };

  /** The usage reported so far. */
  spent(): TokenUsage {
    return this.usage;
  }
  private finishReason: string | undefined;
  private readonly toolCalls: ToolCall[] = [];
  private chunks = 0;

  constructor(model: string) {
    this.model = model;
  }

  add(answer: GeminiAnswer, onDelta: ((text: string) => void) | undefined): void {
    if (answer.error !== undefined) {
      throw new LlmError('transient', `stream error: ${answer.error.message ?? 'unknown'}`, {
        provider: 'gemini',
      });
    }
    this.chunks++;
    if (typeof answer.modelVersion === 'string') this.model = answer.modelVersion;
    const meta = answer.usageMetadata;
    if (meta !== undefined) {
      const input = meta.promptTokenCount ?? 0;
      const output = (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0);
      const cached = meta.cachedContentTokenCount ?? 0;
      this.usage = {
        input,
        output,
        total: meta.totalTokenCount ?? input + output,
        ...(cached > 0 ? { cached } : {}),
      };
    }
    const candidate = answer.candidates?.[0];
    if (candidate === undefined) return;
    for (const part of candidate.content?.parts ?? []) {
      if (typeof part.text === 'string' && part.text !== '') {
        this.text += part.text;
        onDelta?.(part.text);
      }
      if (part.functionCall !== undefined) {
        this.toolCalls.push({
          id: `call_${this.toolCalls.length}`,
          name: part.functionCall.name ?? '',
          arguments: JSON.stringify(part.functionCall.args ?? {}),
        });
      }
    }
    if (typeof candidate.finishReason === 'string') this.finishReason = candidate.finishReason;
  }

  finish(whole: boolean): ChatResult {
    if (this.finishReason === undefined && (!whole || this.chunks === 0)) {
      throw new LlmError('transient', 'stream ended before a finishReason', { provider: 'gemini' });
    }
    return {
      text: this.text,
      model: this.model,
      usage: this.usage,
      finishReason: this.finishReason ?? 'STOP',
      toolCalls: this.toolCalls,
    };
  }
}
