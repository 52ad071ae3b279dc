/**
 * The providers' HTTP client (ARCHITECTURE §2: undici): one keep-alive `Agent` per provider
 * (connection pools per origin), connect / headers / body timeouts, the caller's AbortSignal on
 * every request. Failures come back as classified {@link LlmError}s with keys scrubbed.
 */
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { classifyHttpError, transportError, type LlmError } from './llm-error.js';

/** Timeouts of provider requests, in milliseconds. */
export interface HttpTimeouts {
  /** TCP/TLS connect. @default 5000 */
  connectMs: number;
  /** Until the response headers (the first byte of a non-streamed answer). @default 120000 */
  headersMs: number;
  /** Between two body chunks (a stalled stream). @default 60000 */
  bodyMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  connectMs: 5000,
  headersMs: 120_000,
  bodyMs: 60_000,
};

/** Longest error body read, in bytes: enough for any provider's JSON error. */
const MAX_ERROR_BODY = 64 * 1024;

export interface HttpClient {
  /**
   * Sends a request and returns the body of a 2xx answer as a byte stream; any other status is
   * read (bounded) and rejected as a classified error.
   */
  send(request: HttpRequest): Promise<HttpAnswer>;
  /** Sends and reads a 2xx answer as JSON. */
  json(request: HttpRequest): Promise<unknown>;
  /** Closes the pools (open keep-alive connections). */
  close(): Promise<void>;
}

export interface HttpAnswer {
  /** The media type, lowercase, without parameters (`text/event-stream`). */
  contentType: string;
  body: AsyncIterable<Uint8Array>;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  signal: AbortSignal;
  /** Overrides the client's headers timeout (the probe's short one). */
  headersTimeoutMs?: number;
}

export interface HttpClientOptions {
  provider: string;
  timeouts?: HttpTimeouts;
  /** Credential values scrubbed from error messages (the provider's key). */
  secrets?: readonly string[];
  /**
   * Paces the body chunks of answers: each chunk is handed on once the returned promise resolves
   * (at once when it returns undefined). The service passes its turn slicer's `slot`, so a loop
   * turn relays a bounded amount of streamed chunks and the rest wait for the next turns. @default
   * none: each chunk is handed on as it arrives
   */
  pace?: () => Promise<void> | undefined;
}

/** Creates a provider's HTTP client: its own keep-alive undici Agent with the given timeouts. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const timeouts = options.timeouts ?? DEFAULT_HTTP_TIMEOUTS;
  const secrets = options.secrets ?? [];
  const pace = options.pace;
  const dispatcher: Dispatcher = new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: 30_000,
  });

  async function send(req: HttpRequest): Promise<HttpAnswer> {
    let response: Dispatcher.ResponseData;
    try {
      response = await undiciRequest(req.url, {
        method: req.method,
        headers:
          req.body === undefined
            ? req.headers
            : { 'content-type': 'application/json', ...req.headers },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        signal: req.signal,
        dispatcher,
        ...(req.headersTimeoutMs === undefined ? {} : { headersTimeout: req.headersTimeoutMs }),
      });
    } catch (error) {
      throw failure(error, req.signal);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      const type = response.headers['content-type'];
      return {
        contentType:
          (Array.isArray(type) ? type[0] : type)?.split(';')[0]?.trim().toLowerCase() ?? '',
        body: guardBody(response.body, req.signal),
      };
    }
    let text: string;
    try {
      text = await readBounded(response.body);
    } catch (error) {
      throw failure(error, req.signal);
    }
    const retryAfter = response.headers['retry-after'];
    throw classifyHttpError(
      options.provider,
      response.statusCode,
      text,
      Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      secrets,
    );
  }

  /**
   * Body errors (a reset mid-stream, the body timeout) classified like request errors; each
   * chunk handed on in its turn when the client is paced. (Pacing does not shorten the loop's
   * longest stalls, which are scavenges during a start burst, but its p99: README
   * "Benchmarks", `bench:llm`.)
   */
  async function* guardBody(
    body: AsyncIterable<Uint8Array>,
    signal: AbortSignal,
  ): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of body) {
        const turn = pace?.();
        if (turn !== undefined) {
          await turn;
          // Cancelled while the chunk waited for its turn: nothing more is handed on.
          if (signal.aborted) throw signal.reason;
        }
        yield chunk;
      }
    } catch (error) {
      throw failure(error, signal);
    }
  }

  function failure(error: unknown, signal: AbortSignal): unknown {
    // A cancelled call ends with the caller's own reason (the step runner reports it).
    if (signal.aborted) return signal.reason as unknown;
    return transportError(options.provider, error, secrets);
  }

  return {
    send,
    async json(req) {
      return readJson(options.provider, (await send(req)).body);
    },
    close: () => dispatcher.close(),
  };
}

/** Reads a whole body as JSON; a body that is not JSON is a transient failure. */
export async function readJson(
  provider: string,
  body: AsyncIterable<Uint8Array>,
): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw transportError(provider, new Error('answer is not JSON', { cause: error }));
  }
}

async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size < MAX_ERROR_BODY) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY);
}

export type { LlmError };
