import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { WebSocket } from 'ws';
import { loadConfig, type Config } from '../../src/config/index.js';
import { isAppError } from '../../src/errors.js';
import { createEventHub, type EventHub } from '../../src/events/hub.js';
import type { WorkflowEvent } from '../../src/generated/events.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { createAuth } from '../../src/http/middleware/auth.js';
import { createRateLimiter } from '../../src/http/middleware/rate-limit.js';
import { createStreamRoute, type StreamRouteOptions } from '../../src/http/routes/stream.js';
import {
  attachWebSocketHub,
  type WebSocketHub,
  type WebSocketHubOptions,
} from '../../src/http/ws-hub.js';
import { createSilentLogger } from '../../src/log.js';
import { createHistoryIndex, type HistoryIndex } from '../../src/store/history.js';
import { FakeRuntime } from '../unit/events/hub-fixtures.js';

/** Items arriving over time, with promises that resolve on a condition (no sleeps). */
export class Inbox<T> {
  readonly items: T[] = [];
  ended = false;
  private readonly emitter = new EventEmitter();

  push(item: T): void {
    this.items.push(item);
    this.emitter.emit('change');
  }

  end(): void {
    this.ended = true;
    this.emitter.emit('change');
  }

  /** Resolves once `predicate(items)` holds; rejects if the inbox ends first. */
  until(predicate: (items: T[]) => boolean, what = 'condition'): Promise<T[]> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (predicate(this.items)) {
          this.emitter.off('change', check);
          resolve(this.items);
          return true;
        }
        if (this.ended) {
          this.emitter.off('change', check);
          reject(
            new Error(`ended before ${what}; got ${JSON.stringify(this.items).slice(0, 500)}`),
          );
          return true;
        }
        return false;
      };
      if (!check()) this.emitter.on('change', check);
    });
  }

  /** Resolves with every item once the inbox ends. */
  done(): Promise<T[]> {
    return new Promise((resolve) => {
      if (this.ended) return resolve(this.items);
      const check = (): void => {
        if (!this.ended) return;
        this.emitter.off('change', check);
        resolve(this.items);
      };
      this.emitter.on('change', check);
    });
  }
}

export interface TestServer {
  baseUrl: string;
  wsUrl: string;
  server: Server;
  runtime: FakeRuntime;
  hub: EventHub;
  history: HistoryIndex;
  wsHub: WebSocketHub;
  config: Config;
  runsDir: string;
  /** Emits 'request' (req, res) for each HTTP request the server receives. */
  requests: EventEmitter;
  /** Run ids whose feed was opened (hub.open resolved): the client is subscribed from then on. */
  feeds: Inbox<string>;
  /** The WebSocket hub's client count after each socket closed and was released. */
  disconnects: Inbox<number>;
  writeRunFile(record: RunRecord): Promise<string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  finishedBuffers?: number;
  stream?: Partial<Pick<StreamRouteOptions, 'keepaliveMs' | 'idleTimeoutMs' | 'maxBufferedBytes'>>;
  ws?: Partial<
    Pick<
      WebSocketHubOptions,
      'maxBufferedBytes' | 'pingIntervalMs' | 'maxPendingPerClient' | 'maxPayload' | 'slicer'
    >
  >;
}

/**
 * A real HTTP server on 127.0.0.1:0 with the stream route and the WebSocket hub, a hub fed by a
 * FakeRuntime the test drives, and the real history index over a temp runs dir.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const runsDir = await mkdtemp(join(tmpdir(), 'agentic-events-'));
  const config = loadConfig({
    AGENTIC_RUNS_DIR: runsDir,
    AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
    ...options.env,
  });
  const logger = createSilentLogger();
  const runtime = new FakeRuntime();
  const history = createHistoryIndex({ runsDir, logger });
  await history.load();
  const hub = createEventHub({
    runtime,
    history,
    logger,
    finishedBuffers: options.finishedBuffers ?? 1000,
  });
  const feeds = new Inbox<string>();
  const open = hub.open.bind(hub);
  hub.open = async (runId, ...rest) => {
    const subscription = await open(runId, ...rest);
    feeds.push(runId);
    return subscription;
  };
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      ctx.status = isAppError(error) ? error.status : 500;
      ctx.body = { detail: isAppError(error) ? error.message : 'Internal Server Error' };
    }
  });
  app.use(createStreamRoute({ hub, logger, ...options.stream }));
  const requests = new EventEmitter();
  const callback = app.callback();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.emit('request', req, res);
    void callback(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const wsHub = attachWebSocketHub(server, {
    hub,
    guard: createAuth(config),
    rateLimit: createRateLimiter(config),
    config,
    logger,
    ...options.ws,
  });
  const disconnects = new Inbox<number>();
  wsHub.onDisconnect(() => disconnects.push(wsHub.clientCount));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    server,
    runtime,
    hub,
    history,
    wsHub,
    config,
    runsDir,
    requests,
    feeds,
    disconnects,
    async writeRunFile(record) {
      const filename = `20260101T000000000Z_${record.workflow_name}_${record.run_id}.json`;
      await writeFile(join(runsDir, filename), JSON.stringify(record));
      // As the runtime's onRecord does for the service: ids are found through the index.
      history.upsert(record, filename);
      return filename;
    },
    async close() {
      await wsHub.close();
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(runsDir, { recursive: true, force: true });
    },
  };
}

export interface SseClient {
  status: number;
  headers: Headers;
  /** Parsed `data:` frames, keepalives included. */
  frames: Inbox<Record<string, unknown>>;
  /** Only the run events (keepalives left out). */
  events(): WorkflowEvent[];
  abort(): void;
}

/** Opens an SSE stream with fetch and parses its frames as they arrive. */
export async function openSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const frames = new Inbox<Record<string, unknown>>();
  const client: SseClient = {
    status: response.status,
    headers: response.headers,
    frames,
    events: () => frames.items.filter((f) => f.type !== 'keepalive') as unknown as WorkflowEvent[],
    abort: () => controller.abort(),
  };
  if (
    response.body === null ||
    !response.headers.get('content-type')?.startsWith('text/event-stream')
  ) {
    frames.push((await response.json()) as Record<string, unknown>);
    frames.end();
    return client;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
        let cut = text.indexOf('\n\n');
        while (cut >= 0) {
          const frame = text.slice(0, cut);
          text = text.slice(cut + 2);
          for (const line of frame.split('\n')) {
            if (line.startsWith('data: '))
              frames.push(JSON.parse(line.slice(6)) as Record<string, unknown>);
          }
          cut = text.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by the test or dropped by the server: the inbox just ends.
    }
    frames.end();
  })();
  return client;
}

export interface WsClient {
  ws: WebSocket;
  events: Inbox<WorkflowEvent>;
  /** One entry per ping received from the server. */
  pings: Inbox<number>;
  /** Rejects with {@link UpgradeRefused} when the server answers the upgrade with an HTTP error. */
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}

/** An upgrade answered with an HTTP status instead of a handshake. */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string | string[] | undefined>,
    readonly body: string,
  ) {
    super(`HTTP ${status}`);
  }
}

/** A real `ws` client that records every frame from the first one. */
export function connectWs(url: string, headers: Record<string, string> = {}): WsClient {
  const ws = new WebSocket(url, { headers });
  const events = new Inbox<WorkflowEvent>();
  const pings = new Inbox<number>();
  ws.on('message', (data: Buffer) =>
    events.push(JSON.parse(data.toString('utf8')) as WorkflowEvent),
  );
  ws.on('ping', () => pings.push(pings.items.length + 1));
  ws.on('error', () => undefined);
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        req.destroy();
        reject(new UpgradeRefused(res.statusCode ?? 0, res.headers, body));
      });
    });
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => {
      events.end();
      pings.end();
      resolve({ code, reason: reason.toString('utf8') });
    });
  });
  return { ws, events, pings, opened, closed };
}

export const seqs = (events: { seq: number }[]): number[] => events.map((event) => event.seq);
export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
