import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../config/index.js';
import { errorMessage } from '../errors.js';
import { attachFeed } from '../events/feed.js';
import type { EventHub, RunHistoryLookup } from '../events/hub.js';
import type { Logger } from '../log.js';
import { RUN_ID } from '../store/history.js';
import { isOriginAllowed } from './middleware/cors.js';

/** Close codes sent by the WebSocket hub. */
export const WS_CLOSE = {
  /** After the run's last event (`workflow_end`, or `evaluation_complete` with evaluation). */
  NORMAL: 1000,
  /** The server is shutting down. */
  GOING_AWAY: 1001,
  /** Spec: origin not allowed, key in the query string, missing or invalid key. */
  POLICY: 1008,
  /** Ours: no active, buffered or persisted run with this id. */
  RUN_NOT_FOUND: 4404,
} as const;

/** Bytes a WebSocket client may have queued before it is terminated. */
export const DEFAULT_WS_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Query parameters that carry a credential; a key there is refused (spec: Authentication 8). */
const QUERY_KEY_PARAMS = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'x-api-key',
  'x_api_key',
  'authorization',
]);

const WS_PATH = /^\/ws\/execution\/([^/]+)$/;

/** The API-key check for upgrade requests (counts failures toward the lockout). */
export interface UpgradeGuard {
  checkUpgrade(req: IncomingMessage): { ok: true } | { ok: false; reason: string };
}

export interface WebSocketHubOptions {
  hub: EventHub;
  /** Run files, for runs the hub holds no buffer for. @default the hub's own lookup */
  history?: RunHistoryLookup;
  guard: UpgradeGuard;
  config: Config;
  logger: Logger;
  /** Origin check. @default `isOriginAllowed(origin, config)` (AGENTIC_CORS_ORIGINS) */
  isOriginAllowed?: (origin: string) => boolean;
  /** Queued bytes above which a client that does not read is terminated. @default 1 MiB */
  maxBufferedBytes?: number;
  /** How long close() waits for closing handshakes before terminating. @default 2000 */
  closeGraceMs?: number;
}

export interface WebSocketHub {
  /** Stops accepting upgrades, closes every client with 1001, resolves when all are gone. */
  close(): Promise<void>;
  /** Connected clients. */
  readonly clientCount: number;
}

/**
 * Serves `WS /ws/execution/{run_id}` (spec endpoint 25) on an HTTP server. The upgrade is
 * accepted first, then checked in the spec's order, so browsers see the close code rather than a
 * failed handshake: (1) an Origin header that is not allowed → 1008; (2) a credential in the
 * query string → 1008; (3) a missing or invalid key (the guard) → 1008. Then buffered events are
 * replayed (at most 500, in order, or rebuilt from the run file) and live events follow, one
 * wire event JSON per text frame. Client messages are ignored. After the run's last event the
 * socket closes with 1000; an unknown run closes with 4404 "run not found". A client whose send
 * queue exceeds `maxBufferedBytes` is terminated: it never slows the run or other clients.
 * Other upgrade paths get an HTTP 404 and the socket is destroyed.
 */
export function attachWebSocketHub(server: Server, options: WebSocketHubOptions): WebSocketHub {
  const { hub, guard, config, logger } = options;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_WS_MAX_BUFFERED_BYTES;
  const closeGraceMs = options.closeGraceMs ?? 2000;
  const originAllowed =
    options.isOriginAllowed ?? ((origin: string) => isOriginAllowed(origin, config));
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  let closing = false;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', (error) => {
      logger.debug({ err: errorMessage(error) }, 'upgrade socket error');
    });
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = WS_PATH.exec(url.pathname);
    if (match?.[1] === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const rawRunId = match[1];
    wss.handleUpgrade(req, socket, head, (ws) => {
      serve(ws, req, url, rawRunId).catch((error: unknown) => {
        logger.error({ err: errorMessage(error) }, 'WebSocket session failed');
        ws.terminate();
      });
    });
  };

  const serve = async (
    ws: WebSocket,
    req: IncomingMessage,
    url: URL,
    rawRunId: string,
  ): Promise<void> => {
    ws.on('error', (error) => {
      logger.debug({ err: errorMessage(error) }, 'WebSocket error');
    });
    // Spec: "Any text the client sends is ignored (ping)."
    ws.on('message', () => undefined);

    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin)) {
      ws.close(WS_CLOSE.POLICY, 'origin not allowed');
      return;
    }
    // The guard runs even for a query-string key so the failure counts toward the lockout.
    const auth = guard.checkUpgrade(req);
    for (const name of url.searchParams.keys()) {
      if (QUERY_KEY_PARAMS.has(name.toLowerCase())) {
        ws.close(WS_CLOSE.POLICY, 'API key in query string not allowed');
        return;
      }
    }
    if (!auth.ok) {
      ws.close(WS_CLOSE.POLICY, auth.reason.slice(0, 120));
      return;
    }

    const runId = safeDecode(rawRunId);
    const controller = new AbortController();
    ws.once('close', () => controller.abort());
    const send = (data: Buffer): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > maxBufferedBytes) {
        logger.info({ runId }, 'WebSocket client dropped: not reading');
        controller.abort();
        ws.terminate();
        return;
      }
      ws.send(data, { binary: false });
    };
    const found =
      runId !== undefined &&
      RUN_ID.test(runId) &&
      (await attachFeed(
        hub,
        runId,
        {
          open: () => undefined,
          event: (event) => send(frameOf(event)),
          end: (reason) => {
            if (ws.readyState !== WebSocket.OPEN) return;
            if (reason === 'finished') ws.close(WS_CLOSE.NORMAL, 'run finished');
            else ws.close(WS_CLOSE.GOING_AWAY, 'server shutting down');
          },
        },
        { signal: controller.signal, ...(options.history ? { history: options.history } : {}) },
      ));
    if (!found && ws.readyState === WebSocket.OPEN) {
      ws.close(WS_CLOSE.RUN_NOT_FOUND, 'run not found');
    }
  };

  server.on('upgrade', onUpgrade);

  return {
    get clientCount() {
      return wss.clients.size;
    },
    async close() {
      if (closing) return;
      closing = true;
      server.off('upgrade', onUpgrade);
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
 * serializing once instead of once per client is most of the fan-out cost.
 */
const frames = new WeakMap<object, Buffer>();
function frameOf(event: object): Buffer {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = Buffer.from(JSON.stringify(event), 'utf8');
    frames.set(event, frame);
  }
  return frame;
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
