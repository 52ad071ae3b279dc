import { answerTooLarge, DEFAULT_MAX_ANSWER_BYTES } from './http.js';
import { LlmError } from './llm-error.js';
import { createSseParser, type SseEvent } from './sse-parser.js';

/** A streamed answer: its body and, from the HTTP client, its bounds and how to end it. */
export interface SseSource {
  body: AsyncIterable<Uint8Array>;
  /** Bytes of the body read at most. @default DEFAULT_MAX_ANSWER_BYTES */
  maxAnswerBytes?: number;
  /** Milliseconds without a data event before the answer is ended (needs `abort`). @default none */
  idleTimeoutMs?: number;
  /** Ends the answer: its body fails with `reason`. */
  abort?: (reason: LlmError) => void;
}

/**
 * Feeds a provider's SSE body to `onEvent`, one parsed JSON payload at a time. `[DONE]`
 * sentinels (OpenAI) end the stream; a payload that is not JSON fails the call as transient
 * (the router may try the next candidate); so does a body cut off by the network, one over
 * `maxAnswerBytes` (nothing more is read: a never-ending event holds at most that much), and
 * one without a data event for `idleTimeoutMs`. Comments, blank events and the events
 * `isKeepAlive` names (Anthropic's `ping`) are not data: they do not reset the idle timer.
 */
export async function readSseJson(
  provider: string,
  source: SseSource,
  onEvent: (payload: unknown, event: SseEvent) => void,
  isKeepAlive?: (payload: unknown) => boolean,
): Promise<{ done: boolean }> {
  const maxBytes = source.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const parser = createSseParser({ maxEventBytes: maxBytes });
  const abort = source.abort;
  const idle =
    source.idleTimeoutMs === undefined || abort === undefined
      ? undefined
      : watchIdle(source.idleTimeoutMs, () =>
          abort(
            new LlmError(
              'transient',
              `no data for ${source.idleTimeoutMs} ms (AGENTIC_LLM_IDLE_TIMEOUT_MS; comments and keep-alives do not count)`,
              { provider },
            ),
          ),
        );
  const handle = (events: SseEvent[]): boolean => {
    for (const event of events) {
      if (event.data === '[DONE]') return true;
      if (event.data.trim() === '') continue;
      let payload: unknown;
      try {
        payload = JSON.parse(event.data);
      } catch (error) {
        throw new LlmError('transient', `malformed stream chunk: ${event.data.slice(0, 80)}`, {
          provider,
          cause: error,
        });
      }
      if (idle !== undefined && isKeepAlive?.(payload) !== true) idle.touch();
      onEvent(payload, event);
    }
    return false;
  };
  const parse = (chunk: Uint8Array | undefined): SseEvent[] => {
    try {
      return chunk === undefined ? parser.end() : parser.push(chunk);
    } catch (error) {
      // The parser's own bounds (a line or an event over maxBytes): a stream gone wrong.
      throw new LlmError('transient', error instanceof Error ? error.message : String(error), {
        provider,
        cause: error,
      });
    }
  };
  let size = 0;
  try {
    for await (const chunk of source.body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw answerTooLarge(provider, maxBytes);
      if (handle(parse(chunk))) return { done: true };
    }
    return { done: handle(parse(undefined)) };
  } finally {
    idle?.stop();
  }
}

/**
 * Calls `onIdle` once `ms` pass without `touch()`. One timer re-armed when it fires, not one
 * per event: a stream has thousands of events.
 */
function watchIdle(ms: number, onIdle: () => void): { touch(): void; stop(): void } {
  let last = performance.now();
  const check = (): void => {
    const quiet = performance.now() - last;
    if (quiet >= ms) onIdle();
    else timer = setTimeout(check, ms - quiet);
  };
  let timer = setTimeout(check, ms);
  return {
    touch: () => {
      last = performance.now();
    },
    stop: () => clearTimeout(timer),
  };
}
