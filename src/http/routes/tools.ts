/**
 * `GET /api/tools` (issue 28): the tools a step may list, the built-in ones and each configured
 * MCP server's, with their schema and where they come from, and each server's state. MCP servers
 * not yet connected are connected here (each within its connect time limit, all at once), so
 * the answer says whether they can be reached now.
 */
import type Router from '@koa/router';
import type { ToolsResponse } from '../../generated/api/tools-response.js';
import { DependencyError } from '../../errors.js';
import type { ToolKit } from '../../tools/index.js';

export interface ToolsRouteDeps {
  /** The runtime's tool kit; undefined when this instance runs no steps (an api instance). */
  tools: (() => Promise<ToolKit>) | undefined;
}

export function registerToolsRoute(router: Router, deps: ToolsRouteDeps): void {
  router.get('/api/tools', async (ctx) => {
    if (deps.tools === undefined) {
      throw new DependencyError('tools are listed by the instances that run the steps');
    }
    const kit = await deps.tools();
    const servers = (await kit.mcp?.list()) ?? [];
    const body: ToolsResponse = {
      tools: [
        ...kit.registry.names().map((name) => {
          const tool = kit.registry.get(name)!;
          return {
            name,
            source: 'built-in' as const,
            description: tool.description,
            risk: tool.risk,
            parameters: tool.parameters,
          };
        }),
        ...servers.flatMap((server) =>
          server.tools.map((tool) => ({
            name: tool.name,
            source: 'mcp' as const,
            server: server.name,
            description: tool.description,
            risk: tool.risk,
            parameters: tool.parameters,
          })),
        ),
      ],
      servers: servers.map((server) => ({
        name: server.name,
        transport: server.transport,
        state: server.state,
        ...(server.error === undefined ? {} : { error: server.error }),
        tools: server.tools.map((tool) => tool.name),
      })),
    };
    ctx.body = body;
  });
}
