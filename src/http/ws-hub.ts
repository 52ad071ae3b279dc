import type { Tracer } from '@opentelemetry/api';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../config/index.js';
import type { TurnSlicer } from '../engine/turn-slicer.js';
import { errorMessage } from '../errors.js';
import { queryCarriesKey } from '../security/query-key-params.js';
import { selectProtocol } from '../security/ws-protocol-key.js';
import { attachFeed } from '../events/feed.js';
import type { EventHub, RunHistoryLookup } from '../events/hub.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/index.js';
import { RUN_ID } from '../store/history.js';
import { clientIp } from './client-ip.js';
import { ClientQuota } from './client-quota.js';
import { isOriginAllowed } from './middleware/cors.js';
import { isSameOrigin } from './request-origin.js';
import type { RateLimiter } from './middleware/rate-limit.js';
import { startHeartbeat } from './ws-heartbeat.js';
import { safeDecode } from './safe-decode.js';
import { startUpgradeSpan, WS_OUTCOME, type UpgradeSpan } from './ws-upgrade-span.js';

/** Close codes sent by the WebSocket hub. */
export const WS_CLOSE = {
  /** The server is shutting down. */
  GOING_AWAY: 1001,
  /** Spec: origin not allowed, key in the query string, missing or invalid key. */
  POLICY: 1008,
  /** A client message over `maxPayload` bytes (sent by `ws` itself). */
  MESSAGE_TOO_BIG: 1009,
  /** The client already holds `maxPendingPerClient` sockets waiting for runs not started. */
  TRY_AGAIN_LATER: 1013,
  /** Ours: the run id is not a valid run id, so no such run can ever start. */
  RUN_NOT_FOUND: 4404,
} as const;

/** Bytes a WebSocket client may have queued before it is terminated. */
export const DEFAULT_WS_MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * Largest message a client may send, in bytes. Clients only send pings (spec: "Any text the
 * client sends is ignored"), and messages are read before the key is checked: with `ws`'s
 * 100 MiB default, ten clients took the process from 72 MB to 1 GB RSS, 960 MB of it kept.
 */
export const DEFAULT_WS_MAX_PAYLOAD = 4096;
/** Sockets one client IP may hold waiting for runs not started (`AGENTIC_WS_MAX_PENDING_PER_IP`). */
export const DEFAULT_WS_MAX_PENDING_PER_CLIENT = 10;

const WS_PATH = /^\/ws\/execution\/([^/]+)$/;
/** The route template of {@link WS_PATH} (span names, like the HTTP routes' templates). */
export const WS_ROUTE = '/ws/execution/:run_id';

type UpgradeGuardResult = { ok: true } | { ok: false; reason: string; status?: number };

/** The API-key check for upgrade requests (counts failures toward the lockout). */
export interface UpgradeGuard {
  checkUpgrade(req: IncomingMessage): UpgradeGuardResult | Promise<UpgradeGuardResult>;
}

export interface WebSocketHubOptions {
  hub: EventHub;
  /** Run files, for runs the hub holds no buffer for. @default the hub's own lookup */
  history?: RunHistoryLookup;
  guard: UpgradeGuard;
  /** The global rate limit; each upgrade request counts against the client's budget. */
  rateLimit: Pick<RateLimiter, 'checkUpgrade'>;
  config: Config;
  logger: Logger;
  /**
   * Origin check for other origins than the request's own (a page the service served itself is
   * always allowed). @default `isOriginAllowed(origin, config)` (AGENTIC_CORS_ORIGINS)
   */
  isOriginAllowed?: (origin: string) => boolean;
  /** Queued bytes above which a client that does not read is terminated. @default 1 MiB */
  maxBufferedBytes?: number;
  /** Counts slow clients dropped. @default none */
  metrics?: Pick<ServiceMetrics, 'droppedClients' | 'refusals'>;
  /** Largest message a client may send, in bytes; larger closes with 1009. @default 4096 */
  maxPayload?: number;
  /** Interval between pings, in ms. @default `config.wsPingIntervalMs` (30 s) */
  pingIntervalMs?: number;
  /** Sockets one client IP may hold waiting for runs not started. @default `config.wsMaxPendingPerIp` (10) */
  maxPendingPerClient?: number;
  /** How long close() waits for closing handshakes before terminating. @default 2000 */
  closeGraceMs?: number;
  /** Traces upgrade requests: a server span each, until admitted or refused. @default off */
  tracer?: Tracer;
  /**
   * Spreads upgrades arriving together over event-loop turns (the process's slicer, shared with
   * HTTP requests and run starts): an upgrade's handshake, checks and replay wait for its slot.
   * @default none: each upgrade goes on at once
   */
  slicer?: TurnSlicer;
}

export interface WebSocketHub {
  /** Stops accepting upgrades, closes every client with 1001, resolves when all are gone. */
  close(): Promise<void>;
  /** Connected clients. */
  readonly clientCount: number;
  /** Sockets waiting for a run that has not started, over all clients. */
  readonly pendingCount: number;
  /** Calls `listener` after each client's socket closed and was released. Returns the remover. */
  onDisconnect(listener: () => void): () => void;
}

/**
 * Serves `WS /ws/execution/{run_id}` (spec endpoint 25) on an HTTP server. Each upgrade request
 * counts against the client's rate limit first: over it, an HTTP 429 with `Retry-After` and no
 * handshake. The upgrade is then accepted and checked in the spec's order, so browsers see the
 * close code rather than a failed handshake: (1) an Origin header that is neither the request's
 * own origin (the service's own pages, `request-origin.ts`) nor allowed → 1008;
 * (2) a credential in the query string → 1008; (3) a missing or invalid key (the guard) → 1008.
 * Then buffered events are replayed (at most 500, in order, or rebuilt from the run file) and
 * live events follow, one wire event JSON per text frame. The socket stays open after the run's
 * last event until the client leaves (spec sequence, step 6): clients that reconnect on every
 * close would otherwise reconnect forever. A run id the service does not know yet is waited for:
 * if that run starts, its events arrive from the first; a client may hold `maxPendingPerClient`
 * such sockets (more close with 1013). Client messages are ignored and limited to `maxPayload`
 * bytes. Pings every `pingIntervalMs` find clients that vanished: one that misses a pong is
 * terminated. A client whose send queue exceeds `maxBufferedBytes` is terminated: it never slows
 * the run or other clients. Other upgrade paths get an HTTP 404. With a tracer, each upgrade
 * request gets a server span until it is admitted or refused (`ws-upgrade-span.ts`). With a
 * `slicer`, each upgrade waits for its turn slot first.
 */
export function attachWebSocketHub(server: Server, options: WebSocketHubOptions): WebSocketHub {
  const { hub, guard, config, logger } = options;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_WS_MAX_BUFFERED_BYTES;
  const closeGraceMs = options.closeGraceMs ?? 2000;
  const originAllowed =
    options.isOriginAllowed ?? ((origin: string) => isOriginAllowed(origin, config));
  const pendingQuota = new ClientQuota(options.maxPendingPerClient ?? config.wsMaxPendingPerIp);
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: options.maxPayload ?? DEFAULT_WS_MAX_PAYLOAD,
    // `ws` would echo the first offered protocol, which may be the key (ws-protocol-key.ts).
    handleProtocols: (offered) => selectProtocol(offered),
  });
  const heartbeat = startHeartbeat(wss.clients, options.pingIntervalMs ?? config.wsPingIntervalMs);
  const disconnectListeners = new Set<() => void>();
  const frames = createFrameEncoder();
  let pendingCount = 0;
  let closing = false;

  // The listeners that live as long as a socket are made once per hub, not inside the upgrade's
  // handlers: a closure shares its scope's context with every other closure made there, so a
  // per-upgrade listener kept the upgrade request (headers, URL, span and head buffer, about
  // 1 KB) alive for the socket's lifetime; each start burst's scavenges copied them.
  const onUpgradeSocketError = (error: Error): void => {
    logger.debug({ err: errorMessage(error) }, 'upgrade socket error');
  };
  const onClientClose = (): void => {
    for (const listener of disconnectListeners) listener();
  };
  const onClientError = (error: Error): void => {
    logger.debug({ err: errorMessage(error) }, 'WebSocket error');
  };
  const ignoreMessage = (): void => undefined;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', onUpgradeSocketError);
    const span = startUpgradeSpan(options.tracer, req, socket);
    // A start burst's upgrades (handshake, checks, subscription and replay: 0.2-0.3 ms each)
    // would otherwise all run in the poll phase they arrived in.
    const slot = options.slicer?.slot();
    const admitted =
      slot === undefined
        ? admitUpgrade(req, socket, head, span)
        : slot.then(() => admitUpgrade(req, socket, head, span));
    admitted.catch((error: unknown) => {
      logger.error({ err: errorMessage(error) }, 'WebSocket upgrade failed');
      span.failed(error);
      socket.destroy();
    });
  };

  // The rate limit may be shared through Redis: the decision is awaited.
  const admitUpgrade = async (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    span: UpgradeSpan,
  ): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = WS_PATH.exec(url.pathname);
    if (match?.[1] !== undefined) span.routed(WS_ROUTE);
    const rate = await options.rateLimit.checkUpgrade(req);
    if (!rate.ok) {
      options.metrics?.refusals.inc({ reason: 'rate_limit' });
      span.refused(WS_OUTCOME.RATE_LIMITED, { status: 429 });
      refuseUpgrade(socket, 429, 'Too Many Requests', {
        ...rate.headers,
        'Retry-After': String(rate.retryAfterSeconds),
      });
      return;
    }
    if (match?.[1] === undefined) {
      span.refused(WS_OUTCOME.NOT_FOUND, { status: 404 });
      refuseUpgrade(socket, 404, 'Not Found');
      return;
    }
    const rawRunId = match[1];
    wss.handleUpgrade(req, socket, head, (ws) => {
      span.switched();
      heartbeat.track(ws);
      ws.once('close', onClientClose);
      serve(ws, req, url, rawRunId, span).catch((error: unknown) => {
        logger.error({ err: errorMessage(error) }, 'WebSocket session failed');
        span.failed(error);
        ws.terminate();
      });
    });
  };

  const serve = async (
    ws: WebSocket,
    req: IncomingMessage,
    url: URL,
    rawRunId: string,
    span: UpgradeSpan,
  ): Promise<void> => {
    ws.on('error', onClientError);
    // Spec: "Any text the client sends is ignored (ping)."
    ws.on('message', ignoreMessage);

    const origin = req.headers.origin;
    if (origin !== undefined && !isSameOrigin(origin, req, config) && !originAllowed(origin)) {
      span.refused(WS_OUTCOME.ORIGIN_NOT_ALLOWED, { closeCode: WS_CLOSE.POLICY });
      ws.close(WS_CLOSE.POLICY, 'origin not allowed');
      return;
    }
    // The guard runs even for a query-string key so the failure counts toward the lockout.
    const auth = await guard.checkUpgrade(req);
    if (queryCarriesKey(url.searchParams)) {
      options.metrics?.refusals.inc({ reason: 'auth' });
      span.refused(WS_OUTCOME.KEY_IN_QUERY, { closeCode: WS_CLOSE.POLICY });
      ws.close(WS_CLOSE.POLICY, 'API key in query string not allowed');
      return;
    }
    if (!auth.ok) {
      const locked = auth.status === 429;
      options.metrics?.refusals.inc({ reason: locked ? 'lockout' : 'auth' });
      span.refused(locked ? WS_OUTCOME.LOCKED_OUT : WS_OUTCOME.UNAUTHORIZED, {
        closeCode: WS_CLOSE.POLICY,
      });
      ws.close(WS_CLOSE.POLICY, auth.reason.slice(0, 120));
      return;
    }

    const runId = safeDecode(rawRunId);
    if (runId === undefined || !RUN_ID.test(runId)) {
      span.refused(WS_OUTCOME.INVALID_RUN_ID, { closeCode: WS_CLOSE.RUN_NOT_FOUND });
      ws.close(WS_CLOSE.RUN_NOT_FOUND, 'invalid run id');
      return;
    }
    const client = clientIp(req, config);
    const controller = new AbortController();
    // Counted among the client's sockets waiting for a run, until the run's first event.
    let waiting = false;
    let refused = false;
    const stopWaiting = (): void => {
      if (!waiting) return;
      waiting = false;
      pendingCount -= 1;
      pendingQuota.release(client);
    };
    ws.once('close', () => {
      controller.abort();
      stopWaiting();
    });
    const waitForStart = (): boolean => {
      if (closing || ws.readyState !== WebSocket.OPEN) return false;
      if (!pendingQuota.acquire(client)) {
        refused = true;
        return false;
      }
      waiting = true;
      pendingCount += 1;
      return true;
    };
    const send = (data: Buffer): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > maxBufferedBytes) {
        logger.info({ runId }, 'WebSocket client dropped: not reading');
        options.metrics?.droppedClients.inc({ transport: 'ws' });
        controller.abort();
        ws.terminate();
        return;
      }
      ws.send(data, { binary: false });
    };
    const found = await attachFeed(
      hub,
      runId,
      {
        open: () => undefined,
        event: (event) => {
          stopWaiting();
          send(frames.encode(event));
        },
        end: (reason) => {
          stopWaiting();
          // After the run's last event the socket stays open until the client leaves.
          if (reason === 'hub_closed' && ws.readyState === WebSocket.OPEN) {
            ws.close(WS_CLOSE.GOING_AWAY, 'server shutting down');
          }
        },
      },
      {
        signal: controller.signal,
        waitForStart,
        ...(options.history ? { history: options.history } : {}),
      },
    );
    if (found) {
      span.subscribed(runId);
      return;
    }
    if (ws.readyState !== WebSocket.OPEN) {
      span.gone();
      return;
    }
    if (refused) {
      logger.info({ client, runId, max: pendingQuota.max }, 'WebSocket refused: too many waiting');
      span.refused(WS_OUTCOME.TOO_MANY_WAITING, { closeCode: WS_CLOSE.TRY_AGAIN_LATER });
      ws.close(
        WS_CLOSE.TRY_AGAIN_LATER,
        `too many sockets waiting for runs not started (max ${pendingQuota.max})`,
      );
    } else {
      span.refused(WS_OUTCOME.SHUTTING_DOWN, { closeCode: WS_CLOSE.GOING_AWAY });
      ws.close(WS_CLOSE.GOING_AWAY, 'server shutting down');
    }
  };

  server.on('upgrade', onUpgrade);

  return {
    get clientCount() {
      return wss.clients.size;
    },
    get pendingCount() {
      return pendingCount;
    },
    onDisconnect(listener) {
      disconnectListeners.add(listener);
      return () => disconnectListeners.delete(listener);
    },
    async close() {
      if (closing) return;
      closing = true;
      server.off('upgrade', onUpgrade);
      heartbeat.stop();
      const closed = new Promise<void>((resolve) => {
        wss.close(() => resolve());
      });
      for (const client of wss.clients) client.close(WS_CLOSE.GOING_AWAY, 'server shutting down');
      const grace = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, closeGraceMs);
      await closed;
      clearTimeout(grace);
    },
  };
}

/**
 * One encoded frame per event, shared by every subscriber: with hundreds of clients on a run,
 * serializing once instead of once per client is most of the fan-out cost. The hub hands an
 * event to all its subscribers synchronously, so remembering the last event until the next
 * microtask catches every repeat and then holds nothing (a cache keyed by event kept a frame
 * beside every buffered event, and a plain last-event memo would keep one run's largest frame).
 */
function createFrameEncoder(): { encode(event: object): Buffer } {
  const EMPTY = Buffer.alloc(0);
  let lastEvent: object | undefined;
  let lastFrame = EMPTY;
  let forgetting = false;
  const forget = (): void => {
    forgetting = false;
    lastEvent = undefined;
    lastFrame = EMPTY;
  };
  return {
    encode(event) {
      if (event !== lastEvent) {
        lastFrame = Buffer.from(JSON.stringify(event), 'utf8');
        lastEvent = event;
        if (!forgetting) {
          forgetting = true;
          queueMicrotask(forget);
        }
      }
      return lastFrame;
    },
  };
}

/** Answers an upgrade request with an HTTP error instead of a handshake. */
function refuseUpgrade(
  socket: Duplex,
  status: number,
  statusText: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ detail: status === 429 ? 'Rate limit exceeded' : statusText });
  const lines = [
    `HTTP/1.1 ${status} ${statusText}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
