/**
 * The providers' HTTP client (ARCHITECTURE §2: undici): one keep-alive `Agent` per provider
 * (connection pools per origin), connect / headers / body timeouts, the caller's AbortSignal on
 * every request. Failures come back as classified {@link LlmError}s with keys scrubbed.
 *
 * Every answer is bounded (docs/limits.md): its bytes (`maxAnswerBytes`, counted as the body is
 * read, so nothing downstream can hold more), its total time (`callMs`, from the request to the
 * last byte), and for streams the time without a data event (`idleMs`: enforced by the stream
 * reader, since only it tells data from comments and keep-alives, which reset undici's
 * `bodyMs`).
 */
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { classifyHttpError, LlmError, transportError } from './llm-error.js';

/** Timeouts of provider requests, in milliseconds. */
export interface HttpTimeouts {
  /** TCP/TLS connect. @default 5000 */
  connectMs: number;
  /** Until the response headers (the first byte of a non-streamed answer). @default 120000 */
  headersMs: number;
  /** Between two body chunks, of any content (a stalled socket). @default 60000 */
  bodyMs: number;
  /**
   * Between two data events of a streamed answer: SSE comments, blank events and the provider's
   * keep-alive events (Anthropic's `ping`) do not count. @default 60000
   */
  idleMs?: number;
  /** The whole call, from the request to the answer's last byte. @default 600000 */
  callMs?: number;
}

export const DEFAULT_HTTP_TIMEOUTS: Required<HttpTimeouts> = {
  connectMs: 5000,
  headersMs: 120_000,
  bodyMs: 60_000,
  idleMs: 60_000,
  callMs: 600_000,
};

/**
 * Largest answer, in bytes of its body (a streamed answer's SSE text included). 32 MiB: a
 * 100 000-token streamed answer is about 25 MB of OpenAI chunks; an answer over it is a provider
 * gone wrong (the never-ending event took the process to 2.9 GB of RSS).
 */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** The error of an answer over its byte bound. */
export function answerTooLarge(provider: string, maxBytes: number): LlmError {
  return new LlmError(
    'transient',
    `answer exceeds ${maxBytes} bytes (AGENTIC_LLM_MAX_ANSWER_BYTES)`,
    { provider },
  );
}

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
  /** The body, failing once it exceeds `maxAnswerBytes` or the call's deadline. */
  body: AsyncIterable<Uint8Array>;
  /** The client's answer bound (the stream reader bounds its pending event with it). */
  maxAnswerBytes: number;
  /** The client's idle timeout of streams (see {@link HttpTimeouts.idleMs}). */
  idleTimeoutMs: number;
  /** Ends the answer now: its body fails with `reason` (an idle stream). */
  abort(reason: LlmError): void;
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
  /** Largest answer body, in bytes. @default DEFAULT_MAX_ANSWER_BYTES (32 MiB) */
  maxAnswerBytes?: number;
}

/** Creates a provider's HTTP client: its own keep-alive undici Agent with the given timeouts. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.timeouts };
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const secrets = options.secrets ?? [];
  const pace = options.pace;
  const dispatcher: Dispatcher = new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: 30_000,
  });

  async function send(req: HttpRequest): Promise<HttpAnswer> {
    // The call's own end (deadline, idle stream, too large) beside the caller's cancellation.
    const own = new AbortController();
    const deadline = setTimeout(
      () =>
        own.abort(
          new LlmError(
            'transient',
            `answer not complete after ${timeouts.callMs} ms (AGENTIC_LLM_CALL_TIMEOUT_MS)`,
            { provider: options.provider },
          ),
        ),
      timeouts.callMs,
    );
    const call: Call = { caller: req.signal, own, deadline };
    let response: Dispatcher.ResponseData;
    try {
      response = await undiciRequest(req.url, {
        method: req.method,
        headers:
          req.body === undefined
            ? req.headers
            : { 'content-type': 'application/json', ...req.headers },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        signal: AbortSignal.any([req.signal, own.signal]),
        dispatcher,
        ...(req.headersTimeoutMs === undefined ? {} : { headersTimeout: req.headersTimeoutMs }),
      });
    } catch (error) {
      clearTimeout(deadline);
      throw failure(error, call);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      const type = response.headers['content-type'];
      return {
        contentType:
          (Array.isArray(type) ? type[0] : type)?.split(';')[0]?.trim().toLowerCase() ?? '',
        body: guardBody(response.body, call),
        maxAnswerBytes,
        idleTimeoutMs: timeouts.idleMs,
        abort: (reason) => own.abort(reason),
      };
    }
    let text: string;
    try {
      text = await readBounded(response.body);
    } catch (error) {
      throw failure(error, call);
    } finally {
      clearTimeout(deadline);
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
   * Body errors (a reset mid-stream, the body timeout) classified like request errors; the bytes
   * counted against `maxAnswerBytes`; each chunk handed on in its turn when the client is paced.
   * (Pacing does not shorten the loop's longest stalls, which are scavenges during a start
   * burst, but its p99: docs/benchmarks.md, `bench:llm`.)
   */
  async function* guardBody(
    body: AsyncIterable<Uint8Array>,
    call: Call,
  ): AsyncGenerator<Uint8Array> {
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (size > maxAnswerBytes) {
          call.own.abort(answerTooLarge(options.provider, maxAnswerBytes));
          throw call.own.signal.reason;
        }
        const turn = pace?.();
        if (turn !== undefined) {
          await turn;
          // Cancelled while the chunk waited for its turn: nothing more is handed on.
          if (call.caller.aborted) throw call.caller.reason;
          if (call.own.signal.aborted) throw call.own.signal.reason;
        }
        yield chunk;
      }
    } catch (error) {
      throw failure(error, call);
    } finally {
      clearTimeout(call.deadline);
    }
  }

  function failure(error: unknown, call: Call): unknown {
    // A cancelled call ends with the caller's own reason (the step runner reports it).
    if (call.caller.aborted) return call.caller.reason as unknown;
    // A call ended by its own bound ends with that bound's error, not undici's abort.
    if (call.own.signal.aborted) return call.own.signal.reason as unknown;
    return transportError(options.provider, error, secrets);
  }

  return {
    send,
    async json(req) {
      return readJson(options.provider, (await send(req)).body, maxAnswerBytes);
    },
    close: () => dispatcher.close(),
  };
}

/** One request's ends: the caller's signal, its own controller, its deadline timer. */
interface Call {
  caller: AbortSignal;
  own: AbortController;
  deadline: ReturnType<typeof setTimeout>;
}

/**
 * Reads a whole body as JSON; a body that is not JSON is a transient failure, and so is one
 * over `maxBytes` (read no further).
 */
export async function readJson(
  provider: string,
  body: AsyncIterable<Uint8Array>,
  maxBytes: number = DEFAULT_MAX_ANSWER_BYTES,
): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw answerTooLarge(provider, maxBytes);
    chunks.push(chunk);
  }
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
