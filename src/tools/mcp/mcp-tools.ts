/**
 * The tools of the configured MCP servers, as registry tools named `mcp:<server>:<tool>` with the
 * server's JSON Schema as their parameters. They are found when asked for (a server is connected
 * on first use), then pass through the registry like the built-in ones: deny by default, the
 * schema, the approval gate (tools listed in the server's `high_risk`), metrics and spans.
 */
import type { SecretProvider } from '../../config/index.js';
import { packageVersion } from '../../config/index.js';
import { mcpToolName, parseMcpToolName } from '../names.js';
import { ToolError } from '../tool-error.js';
import { TOOL_RISKS, type ToolDefinition } from '../types.js';
import type { McpConfig } from './mcp-config.js';
import {
  createMcpConnection,
  McpServerError,
  type McpConnection,
  type McpServerState,
} from './mcp-connection.js';

/** One server in `GET /api/tools`. */
export interface McpServerListing {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  /** Why it is down. */
  error?: string;
  tools: ToolDefinition[];
}

/** Tools found by name outside the registry's own list (the MCP servers'). */
export interface McpToolSource {
  /** The configured server names. */
  servers(): readonly string[];
  /**
   * The tool `name` (`mcp:<server>:<tool>`): undefined when the server does not have it; rejects
   * with a {@link ToolError} naming the server when it is not configured or cannot be reached.
   */
  find(name: string): Promise<ToolDefinition | undefined>;
  /** Every server, connected (each within its connect time limit), with its tools or its error. */
  list(): Promise<McpServerListing[]>;
  close(): Promise<void>;
}

export interface McpToolSourceOptions {
  config: McpConfig;
  secrets: SecretProvider;
  childEnv: Readonly<Record<string, string>>;
  /** AGENTIC_TOOL_TIMEOUT_SECONDS in ms: a call's limit when the server sets none. */
  timeoutMs: number;
  now?: () => number;
}

export function createMcpToolSource(options: McpToolSourceOptions): McpToolSource {
  const { config } = options;
  const connections = new Map<string, McpConnection>();
  for (const server of config.servers) {
    connections.set(
      server.name,
      createMcpConnection({
        config: server,
        secrets: options.secrets,
        childEnv: options.childEnv,
        defaultTimeoutMs: options.timeoutMs,
        breakerThreshold: config.breakerThreshold,
        breakerCooldownMs: config.breakerCooldownMs,
        clientInfo: { name: 'agentic-runtime', version: packageVersion },
        ...(options.now === undefined ? {} : { now: options.now }),
      }),
    );
  }
  // One definition object per listed tool, so the registry compiles its schema once.
  const definitions = new Map<string, { source: object; tool: ToolDefinition }>();

  const definitionsOf = async (connection: McpConnection): Promise<ToolDefinition[]> => {
    const server = config.servers.find((s) => s.name === connection.name)!;
    const listed = await connection.tools();
    return listed.map((tool) => {
      const name = mcpToolName(server.name, tool.name);
      const known = definitions.get(name);
      if (known?.source === tool) return known.tool;
      const definition: ToolDefinition = {
        name,
        description: tool.description,
        risk: server.highRisk.has(tool.name) ? TOOL_RISKS.HIGH : TOOL_RISKS.LOW,
        parameters: tool.inputSchema,
        async run(args, context) {
          let answer;
          try {
            answer = await connection.call(tool.name, args, context.signal);
          } catch (error) {
            if (error instanceof McpServerError)
              throw new ToolError(name, error.message, 'mcp', error);
            throw error;
          }
          if (answer.isError) {
            const text =
              typeof answer.result === 'string' ? answer.result : JSON.stringify(answer.result);
            // 'mcp-answer': the tool answered (the journal records it), unlike a server failure.
            throw new ToolError(name, `the tool answered an error: ${text}`, 'mcp-answer');
          }
          return answer.result;
        },
      };
      definitions.set(name, { source: tool, tool: definition });
      return definition;
    });
  };

  return {
    servers: () => [...connections.keys()],
    async find(name) {
      const parsed = parseMcpToolName(name);
      if (parsed === undefined) return undefined;
      const connection = connections.get(parsed.server);
      if (connection === undefined) {
        throw new ToolError(
          name,
          `no MCP server '${parsed.server}' is configured (${connections.size === 0 ? 'AGENTIC_MCP_CONFIG is not set' : `servers: ${[...connections.keys()].join(', ')}`})`,
        );
      }
      let tools;
      try {
        tools = await definitionsOf(connection);
      } catch (error) {
        if (error instanceof McpServerError) throw new ToolError(name, error.message, 'mcp', error);
        throw error;
      }
      return tools.find((tool) => tool.name === name);
    },
    async list() {
      return Promise.all(
        config.servers.map(async (server): Promise<McpServerListing> => {
          const connection = connections.get(server.name)!;
          let tools: ToolDefinition[] = [];
          try {
            tools = await definitionsOf(connection);
          } catch (error) {
            if (!(error instanceof McpServerError)) throw error;
          }
          const status = connection.status();
          return {
            name: server.name,
            transport: server.transport,
            state: status.state,
            ...(status.error === undefined ? {} : { error: status.error }),
            tools,
          };
        }),
      );
    },
    async close() {
      await Promise.all([...connections.values()].map((connection) => connection.close()));
    },
  };
}
