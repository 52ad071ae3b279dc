/**
 * Requests that arrive once shutdown has begun (on connections opened before: the listener is
 * closed) are answered here, before Koa: 503 `{detail: "shutting down"}` with `Retry-After` and
 * `Connection: close`, so clients go elsewhere and the connection ends. One log record when the
 * first is refused and one count at the end, not an error record per request: under load a
 * shutdown sees thousands of them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Seconds clients are told to wait before retrying (another instance, or this one restarted). */
const RETRY_AFTER_SECONDS = 5;
const BODY = JSON.stringify({ detail: 'shutting down' });

export interface ShutdownGate {
  /** The server's request handler: `handler` until {@link close}, then the 503 answer. */
  handle: Handler;
  /** From now on, every request is refused. */
  close(): void;
  /** Requests refused so far. */
  readonly refused: number;
}

export function createShutdownGate(handler: Handler, logger: Logger): ShutdownGate {
  let closed = false;
  let refused = 0;
  return {
    handle(req, res) {
      if (!closed) {
        handler(req, res);
        return;
      }
      if (refused++ === 0) logger.info('refusing requests: shutting down');
      // The request body is not read: Connection: close ends the socket after this answer.
      res.writeHead(503, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(BODY),
        'Retry-After': String(RETRY_AFTER_SECONDS),
        Connection: 'close',
      });
      res.end(BODY);
    },
    close() {
      closed = true;
    },
    get refused() {
      return refused;
    },
  };
}
