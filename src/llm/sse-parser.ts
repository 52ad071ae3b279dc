/**
 * A server-sent events parser for provider streams (the WHATWG "event stream" interpretation):
 * bytes in, `{event, data}` out. Chunks may split anywhere: inside a UTF-8 character, between
 * `\r` and `\n`, inside a field name. `data:` lines of one event are joined with `\n`; comment
 * lines (`:`) and `id`/`retry` fields are ignored; an event is dispatched at a blank line.
 */
export interface SseEvent {
  /** The `event:` field; `message` when absent. */
  event: string;
  data: string;
}

export interface SseParser {
  /** Feeds one chunk; returns the events it completed. */
  push(chunk: Uint8Array | string): SseEvent[];
  /** The stream ended: returns an event left without its blank line (servers that omit it). */
  end(): SseEvent[];
}

export interface SseParserOptions {
  /**
   * Largest event held while it is incomplete, in characters of its `data:` lines and of the
   * line being read (at most their bytes): a provider gone mad cannot grow the buffer forever
   * with one endless line or endless lines of one event. @default MAX_SSE_EVENT (32 MiB)
   */
  maxEventBytes?: number;
}

/** Largest incomplete event by default, in characters (see {@link SseParserOptions}). */
export const MAX_SSE_EVENT = 32 * 1024 * 1024;

export function createSseParser(options: SseParserOptions = {}): SseParser {
  const maxEvent = options.maxEventBytes ?? MAX_SSE_EVENT;
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  // Characters of the pending event's data lines, their line ends included.
  let eventSize = 0;
  // A chunk ending in `\r` may be the first half of `\r\n`: the next `\n` is then not a line.
  let skipLeadingNewline = false;
  let eventName = '';
  let data: string[] = [];
  let hasData = false;

  function dispatch(out: SseEvent[]): void {
    if (hasData)
      out.push({ event: eventName === '' ? 'message' : eventName, data: data.join('\n') });
    eventName = '';
    data = [];
    hasData = false;
    eventSize = 0;
  }

  function tooLarge(): Error {
    return new Error(`event stream event exceeds ${maxEvent} bytes`);
  }

  function line(text: string, out: SseEvent[]): void {
    if (text === '') return dispatch(out);
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      eventSize += text.length + 1;
      if (eventSize > maxEvent) throw tooLarge();
      data.push(value);
      hasData = true;
    } else if (field === 'event') {
      eventName = value;
    }
  }

  function drain(text: string, out: SseEvent[]): void {
    buffer += text;
    let start = 0;
    if (buffer === '') return;
    if (skipLeadingNewline && buffer.startsWith('\n')) start = 1;
    skipLeadingNewline = false;
    for (;;) {
      let end = -1;
      for (let i = start; i < buffer.length; i++) {
        const code = buffer.charCodeAt(i);
        if (code === 10 || code === 13) {
          end = i;
          break;
        }
      }
      if (end === -1) break;
      line(buffer.slice(start, end), out);
      if (buffer.charCodeAt(end) === 13) {
        if (end + 1 < buffer.length) {
          start = buffer.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
        } else {
          skipLeadingNewline = true;
          start = end + 1;
        }
      } else {
        start = end + 1;
      }
    }
    buffer = buffer.slice(start);
    if (eventSize + buffer.length > maxEvent) throw tooLarge();
  }

  return {
    push(chunk) {
      const out: SseEvent[] = [];
      drain(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }), out);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      drain(decoder.decode(), out);
      if (buffer !== '') line(buffer, out);
      buffer = '';
      dispatch(out);
      return out;
    },
  };
}
