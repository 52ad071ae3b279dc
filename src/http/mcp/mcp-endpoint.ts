/**
 * `/mcp`: the service as an MCP server over Streamable HTTP (docs/mcp.md), with the official
 * SDK's server package (`@modelcontextprotocol/server`, v2). Each workflow of the registry is a
 * tool (workflow-tool.ts); a call runs it as `POST /api/run` does (workflow-call.ts).
 *
 * Two eras, as the SDK's `createMcpHandler` documents the routing (`isLegacyRequest`):
 * - 2026-07-28 clients: stateless, `createMcpHandler` builds a server instance per request (the
 *   protocol is per-request by design; a call is cancelled by closing its stream);
 * - 2025-era clients (`initialize`; most clients today): sessions (legacy-sessions.ts), so their
 *   `notifications/cancelled` reaches the running call and list changes reach their stream.
 * `tools/list` reads the registry each time: a workflow saved or deleted shows up at the next
 * list, and a save over the API also sends `notifications/tools/list_changed`.
 *
 * Mounted as Koa middleware after the rate limit and the API key (same per-client limit, same
 * 401/429 `{detail}`) and before the body parser: the SDK reads the body itself (bounded by
 * AGENTIC_MAX_BODY_BYTES) so that a malformed message gets its JSON-RPC error. A call's
 * arguments are sanitized as a `POST /api/run` body is.
 */
import type * as McpServerModule from '@modelcontextprotocol/server';
import type { Middleware } from 'koa';
import type { Context as TraceContext } from '@opentelemetry/api';
import type { McpHttpHandler, Server, ServerContext } from '@modelcontextprotocol/server';
import type { Config } from '../../config/index.js';
import { packageVersion } from '../../config/index.js';
import type { Logger } from '../../log.js';
import type { WorkflowRegistry } from '../../workflow/index.js';
import { requestLog } from '../context.js';
import { traceContextOf } from '../middleware/tracing.js';
import { createLegacySessions, type LegacySessions } from './legacy-sessions.js';
import { toWebRequest, writeWebResponse } from './web-bridge.js';
import { callWorkflow, type WorkflowCallDeps, type WorkflowCallOutcome } from './workflow-call.js';
import { toolOf, type WorkflowToolDefinition } from './workflow-tool.js';

/** The path the endpoint answers (exact). */
export const MCP_PATH = '/mcp';

export interface McpEndpointDeps extends Omit<WorkflowCallDeps, 'logger'> {
  config: Pick<Config, 'maxBodyBytes'>;
  registry: Pick<WorkflowRegistry, 'list'>;
  logger: Logger;
}

export interface McpEndpoint {
  middleware: Middleware;
  /** Tells subscribed clients the tool list changed (`notifications/tools/list_changed`). */
  toolsChanged(): void;
  /** Aborts exchanges in flight (shutdown). */
  close(): Promise<void>;
}

type ServerModule = typeof McpServerModule;

interface Handlers {
  sdk: ServerModule;
  /** 2026-07-28 traffic: stateless, a server instance per request. */
  modern: McpHttpHandler;
  /** 2025-era traffic: sessions (legacy-sessions.ts says why). */
  legacy: LegacySessions;
}

/** The tools of every workflow that compiles; one that does not is left out (and logged). */
async function listTools(deps: McpEndpointDeps): Promise<WorkflowToolDefinition[]> {
  const tools: WorkflowToolDefinition[] = [];
  for (const name of await deps.registry.list()) {
    try {
      tools.push(toolOf(await deps.runtime.getWorkflow(name)));
    } catch (error) {
      deps.logger.debug({ err: error, workflow: name }, 'MCP: workflow not listed (invalid)');
    }
  }
  return tools;
}

export function createMcpEndpoint(deps: McpEndpointDeps): McpEndpoint {
  // The SDK loads at the first /mcp request, not at start-up (as the MCP client's does).
  let handlers: Promise<Handlers> | undefined;
  // The request's span context, for the runs its calls start (the factory sees the Request).
  const traces = new WeakMap<Request, TraceContext>();

  const build = async (): Promise<Handlers> => {
    const sdk: ServerModule = await import('@modelcontextprotocol/server');
    const onerror = (error: unknown): void => {
      deps.logger.debug({ err: error }, 'MCP: request refused or stream closed');
    };
    const createServer = (): Server => {
      const server = new sdk.Server(
        { name: 'agentic-runtime', version: packageVersion },
        {
          capabilities: { tools: { listChanged: true } },
          instructions:
            'Each tool runs a workflow of agentic-runtime and answers with its declared outputs.',
        },
      );
      server.setRequestHandler('tools/list', async () => ({ tools: await listTools(deps) }));
      server.setRequestHandler('tools/call', async (request, ctx: ServerContext) => {
        const { name } = request.params;
        const token = ctx.mcpReq._meta?.progressToken;
        const http = ctx.http?.req;
        const traceContext = http === undefined ? undefined : traces.get(http);
        let outcome: WorkflowCallOutcome;
        try {
          outcome = await callWorkflow(deps, {
            name,
            ...(traceContext === undefined ? {} : { traceContext }),
            arguments: request.params.arguments,
            signal: ctx.mcpReq.signal,
            ...(token === undefined
              ? {}
              : {
                  progress: (progress) =>
                    ctx.mcpReq.notify({
                      method: 'notifications/progress',
                      params: { progressToken: token, ...progress },
                    }),
                }),
          });
        } catch (error) {
          // As the error funnel does for a route: logged whole, never sent (no message, no stack).
          deps.logger.error({ err: error, tool: name }, 'MCP: tools/call failed');
          throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InternalError, 'Internal error');
        }
        if (outcome.kind === 'unknown_tool') {
          throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
        }
        return outcome.result;
      });
      return server;
    };
    return {
      sdk,
      modern: sdk.createMcpHandler(createServer, {
        legacy: 'reject',
        maxRequestBodySize: deps.config.maxBodyBytes,
        onerror,
      }),
      legacy: createLegacySessions({
        sdk,
        createServer,
        maxRequestBodySize: deps.config.maxBodyBytes,
        onerror,
      }),
    };
  };

  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== MCP_PATH) {
      await next();
      return;
    }
    const log = requestLog(ctx, deps.logger);
    const mcp = await (handlers ??= build());
    const { request } = toWebRequest(ctx.req, ctx.res, `http://localhost${ctx.url}`);
    const traceContext = traceContextOf(ctx);
    if (traceContext !== undefined) traces.set(request, traceContext);
    // 2025-era traffic (the initialize handshake, session ids) to the sessions, the rest to the
    // SDK's 2026-07-28 per-request handler: the routing createMcpHandler documents.
    const legacy = await mcp.sdk.isLegacyRequest(request, undefined, {
      maxRequestBodySize: deps.config.maxBodyBytes,
    });
    const response = legacy ? await mcp.legacy.handle(request) : await mcp.modern.fetch(request);
    // Koa must not write a body of its own over the SDK's answer.
    ctx.respond = false;
    await writeWebResponse(response, ctx.res).catch((error: unknown) => {
      log.warn({ err: error }, 'MCP: response stream failed');
    });
  };

  return {
    middleware,
    toolsChanged() {
      handlers
        ?.then((mcp) => {
          mcp.modern.notify.toolsChanged();
          mcp.legacy.toolsChanged();
        })
        .catch(() => undefined);
    },
    async close() {
      if (handlers === undefined) return;
      const mcp = await handlers;
      await Promise.all([mcp.modern.close(), mcp.legacy.close()]);
    },
  };
}
