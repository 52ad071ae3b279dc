/** The built-in tools' names, for load-time validation of `tools:` lists. */
export const BUILT_IN_TOOLS = [
  'file_read',
  'file_list',
  'file_write',
  'file_delete',
  'shell',
  'http_get',
  'http_post',
  'memory_get',
  'memory_set',
  'memory_search',
  'memory_delete',
] as const;

/** Tools of MCP servers are named `mcp:<server>:<tool>` (docs/tools.md, "MCP servers"). */
export const MCP_TOOL_PREFIX = 'mcp:';

/** The server and tool of an `mcp:<server>:<tool>` name; undefined for any other name. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { server: rest.slice(0, colon), tool: rest.slice(colon + 1) };
}

/** The registry name of a server's tool. */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}:${tool}`;
}
