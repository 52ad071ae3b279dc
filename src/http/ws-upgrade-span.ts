/**
 * A server span per WebSocket upgrade request (AGENTIC_TRACING=1), named like the HTTP spans:
 * `GET /ws/execution/:run_id` by route template (never the raw path, which holds the run id),
 * or the method alone for a path no WebSocket route serves. It continues the caller's trace
 * when the upgrade request carries a `traceparent`.
 *
 * The span covers the admission of the connection, not its life: it ends when the client is
 * subscribed to its run's events (the replay sent) or refused, whether by an HTTP answer
 * instead of the handshake (404, 429) or by a close code after it (1008 for the origin or
 * the key, 4404, 1013). OpenTelemetry's semantic conventions define no WebSocket spans (only
 * proposals); under the HTTP ones the upgrade is a request whose span ends with its answer,
 * but the spec refuses a bad key after the handshake, so ending at the 101 would show refused
 * connections as accepted. A socket stays open for hours after its run ended: a span of its
 * whole life would say nothing about the request and be held all that time.
 */
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ATTR } from '../tracing/attributes.js';
import { methodLabel } from './middleware/metrics.js';
import { callerContext } from './middleware/tracing.js';

/** How an upgrade request ended (`agentic.ws.outcome`). */
export const WS_OUTCOME = {
  /** Subscribed to its run (or waiting for it to start). */
  SUBSCRIBED: 'subscribed',
  RATE_LIMITED: 'rate_limited',
  NOT_FOUND: 'not_found',
  ORIGIN_NOT_ALLOWED: 'origin_not_allowed',
  KEY_IN_QUERY: 'key_in_query',
  UNAUTHORIZED: 'unauthorized',
  LOCKED_OUT: 'locked_out',
  INVALID_RUN_ID: 'invalid_run_id',
  TOO_MANY_WAITING: 'too_many_waiting',
  SHUTTING_DOWN: 'shutting_down',
  /** `ws` refused the handshake itself (not a GET, bad WebSocket headers). */
  BAD_HANDSHAKE: 'bad_handshake',
  /** The client went away before it was admitted. */
  CLIENT_GONE: 'client_gone',
  ERROR: 'error',
} as const;
export type WsOutcome = (typeof WS_OUTCOME)[keyof typeof WS_OUTCOME];

/** How a refusal reached the client: an HTTP status instead of the handshake, or a close code. */
export type WsRefusal = { status: number } | { closeCode: number };

/** What the hub tells an upgrade's span; with tracing off every call does nothing. */
export interface UpgradeSpan {
  /** The path is a WebSocket route: the span is named by its template. */
  routed(route: string): void;
  /** The handshake is done (101 Switching Protocols). */
  switched(): void;
  /** The client is subscribed to run `runId`: ends the span. */
  subscribed(runId: string): void;
  /** Ends the span with error status. */
  refused(outcome: WsOutcome, how: WsRefusal): void;
  /** The client left before it was admitted: ends the span (no error: nothing failed here). */
  gone(): void;
  /** The admission threw: ends the span with error status. */
  failed(error: unknown): void;
}

const NO_SPAN: UpgradeSpan = {
  routed: () => undefined,
  switched: () => undefined,
  subscribed: () => undefined,
  refused: () => undefined,
  gone: () => undefined,
  failed: () => undefined,
};

/**
 * Starts the span of the upgrade request `req` on `socket` (nothing without a tracer). A socket
 * that closes before the span ended (a handshake `ws` refused on its own) ends it.
 */
export function startUpgradeSpan(
  tracer: Tracer | undefined,
  req: IncomingMessage,
  socket: Duplex,
): UpgradeSpan {
  if (tracer === undefined) return NO_SPAN;
  const method = methodLabel({ method: req.method ?? 'GET' });
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
    callerContext(req.headers),
  );
  let switched = false;
  let ended = false;
  const end = (outcome: WsOutcome, error: string | undefined): void => {
    if (ended) return;
    ended = true;
    socket.off('close', onClose);
    span.setAttribute(ATTR.WS_OUTCOME, outcome);
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end();
  };
  const onClose = (): void => {
    if (switched) end(WS_OUTCOME.CLIENT_GONE, undefined);
    else end(WS_OUTCOME.BAD_HANDSHAKE, 'handshake refused');
  };
  socket.once('close', onClose);
  return {
    routed: (route) => {
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
    },
    switched: () => {
      switched = true;
      span.setAttribute('http.response.status_code', 101);
    },
    subscribed: (runId) => {
      span.setAttribute(ATTR.RUN_ID, runId);
      end(WS_OUTCOME.SUBSCRIBED, undefined);
    },
    refused: (outcome, how) => {
      if ('status' in how) span.setAttribute('http.response.status_code', how.status);
      else span.setAttribute(ATTR.WS_CLOSE_CODE, how.closeCode);
      end(outcome, outcome);
    },
    gone: () => end(WS_OUTCOME.CLIENT_GONE, undefined),
    failed: (error) =>
      end(WS_OUTCOME.ERROR, error instanceof Error ? error.message : 'upgrade failed'),
  };
}
