import type { ServerResponse } from 'node:http';

/** Bytes an SSE client may have queued before it is dropped. */
export const DEFAULT_SSE_MAX_BUFFERED_BYTES = 1024 * 1024;

/** The keepalive frame (spec: "The server sends `keepalive` frames on SSE"). */
export const KEEPALIVE_FRAME = 'data: {"type":"keepalive"}\n\n';

export interface SseWriterOptions {
  /** Queued bytes above which the client is dropped. @default 1 MiB */
  maxBufferedBytes?: number;
  /** Extra response headers (e.g. ones set by earlier middleware are already on `res`). */
  headers?: Record<string, string>;
}

/**
 * Writes a `text/event-stream` response frame by frame on a raw Node response. A client that
 * does not read (its queue grows past `maxBufferedBytes`) is dropped: its connection is
 * destroyed, so a slow client never holds memory or slows the run it watches.
 */
export class SseWriter {
  private readonly res: ServerResponse;
  private readonly maxBufferedBytes: number;
  private readonly extraHeaders: Record<string, string>;
  private state: 'idle' | 'open' | 'ended' = 'idle';
  /** True once the client was dropped for not reading. */
  dropped = false;

  constructor(res: ServerResponse, options: SseWriterOptions = {}) {
    this.res = res;
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES;
    this.extraHeaders = options.headers ?? {};
  }

  /** Whether frames can still be written. */
  get writable(): boolean {
    return this.state === 'open' && !this.res.destroyed && !this.res.writableEnded;
  }

  /**
   * Sends the status line and headers. Compression and proxy buffering are disabled: each
   * frame must reach the client as it is written.
   */
  open(): void {
    if (this.state !== 'idle') return;
    this.state = 'open';
    this.res.writeHead(200, {
      ...this.extraHeaders,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    this.res.flushHeaders();
  }

  /** Sends one `data: <json>` frame. Returns false when the frame was not written. */
  send(data: unknown): boolean {
    return this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Sends a keepalive frame. */
  keepalive(): boolean {
    return this.write(KEEPALIVE_FRAME);
  }

  /** Ends the response (after queued frames are flushed); nothing is sent if it never opened. */
  end(): void {
    const wasOpen = this.state === 'open';
    this.state = 'ended';
    if (wasOpen && !this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  private write(frame: string): boolean {
    if (!this.writable) return false;
    if (this.res.writableLength > this.maxBufferedBytes) {
      this.dropped = true;
      this.state = 'ended';
      this.res.destroy();
      return false;
    }
    this.res.write(frame);
    return true;
  }
}
