/**
 * 2025-era MCP clients (the `initialize` handshake; most IDEs and desktop apps today) served
 * with sessions: the SDK's `WebStandardStreamableHTTPServerTransport` with a session id, one
 * server instance per session. Why not the SDK's stateless fallback: a 2025-era client cancels
 * a call with `notifications/cancelled`, a separate POST, which only reaches the running call
 * when both land on the same server instance; and `notifications/tools/list_changed` needs the
 * session's GET stream. 2026-07-28 clients need none of this (createMcpHandler, per request).
 *
 * Sessions live in this process: bounded in number (the oldest idle one is closed to make
 * room) and closed after an idle time, checked when a session is opened (no timer). Behind a
 * load balancer 2025-era clients need sticky routing; an unknown session id is a 404, after
 * which the spec has the client initialize again.
 */
import { randomUUID } from 'node:crypto';
import type * as McpServerModule from '@modelcontextprotocol/server';
import type {
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

type ServerModule = typeof McpServerModule;

/** Most sessions held at once. */
export const MAX_LEGACY_SESSIONS = 1000;
/** A session unused for this long is closed (ms). */
export const LEGACY_SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
}

export interface LegacySessions {
  handle(request: Request): Promise<Response>;
  /** Sends `notifications/tools/list_changed` on every session. */
  toolsChanged(): void;
  close(): Promise<void>;
  readonly size: number;
}

export interface LegacySessionsOptions {
  sdk: ServerModule;
  createServer: () => Server;
  maxRequestBodySize: number;
  /** @default {@link MAX_LEGACY_SESSIONS} */
  maxSessions?: number;
  /** @default {@link LEGACY_SESSION_IDLE_MS} */
  idleMs?: number;
  /** Injectable clock (ms). @default Date.now */
  now?: () => number;
  onerror: (error: unknown) => void;
}

function sessionNotFound(): Response {
  return Response.json(
    { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } },
    { status: 404 },
  );
}

export function createLegacySessions(options: LegacySessionsOptions): LegacySessions {
  const { sdk } = options;
  const now = options.now ?? Date.now;
  const maxSessions = options.maxSessions ?? MAX_LEGACY_SESSIONS;
  const idleMs = options.idleMs ?? LEGACY_SESSION_IDLE_MS;
  const sessions = new Map<string, Session>();

  const drop = (id: string): void => {
    const session = sessions.get(id);
    if (session === undefined) return;
    sessions.delete(id);
    session.server.close().catch(options.onerror);
  };

  const makeRoom = (): void => {
    const idleSince = now() - idleMs;
    for (const [id, session] of sessions) if (session.lastUsed < idleSince) drop(id);
    // Map order is insertion order; lastUsed refreshes re-insert, so the first is the stalest.
    while (sessions.size >= maxSessions) {
      const oldest = sessions.keys().next().value;
      if (oldest === undefined) break;
      drop(oldest);
    }
  };

  const open = async (request: Request): Promise<Response> => {
    makeRoom();
    const server = options.createServer();
    let session: Session | undefined;
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: options.maxRequestBodySize,
      onsessioninitialized: (id) => {
        session = { server, transport, lastUsed: now() };
        sessions.set(id, session);
      },
      onsessionclosed: (id) => drop(id),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    // Anything but an initialize (refused by the transport) leaves no session behind.
    if (session === undefined) await server.close();
    return response;
  };

  return {
    async handle(request) {
      const id = request.headers.get('mcp-session-id');
      if (id === null) return open(request);
      const session = sessions.get(id);
      if (session === undefined) return sessionNotFound();
      session.lastUsed = now();
      sessions.delete(id);
      sessions.set(id, session);
      return session.transport.handleRequest(request);
    },
    toolsChanged() {
      for (const { server } of sessions.values()) {
        server.sendToolListChanged().catch(options.onerror);
      }
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.map(({ server }) => server.close()));
    },
    get size() {
      return sessions.size;
    },
  };
}
