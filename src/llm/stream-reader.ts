import { LlmError } from './llm-error.js';
import { createSseParser, type SseEvent } from './sse-parser.js';

/**
 * Feeds a provider's SSE body to `onEvent`, one parsed JSON payload at a time. `[DONE]`
 * sentinels (OpenAI) end the stream; a payload that is not JSON fails the call as transient
 * (the router may try the next candidate); so does a body cut off by the network.
 */
export async function readSseJson(
  provider: string,
  body: AsyncIterable<Uint8Array>,
  onEvent: (payload: unknown, event: SseEvent) => void,
): Promise<{ done: boolean }> {
  const parser = createSseParser();
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
      onEvent(payload, event);
    }
    return false;
  };
  for await (const chunk of body) {
    if (handle(parser.push(chunk))) return { done: true };
  }
  return { done: handle(parser.end()) };
}
