/**
 * One MCP server as the tool registry sees it: connected on first use (never at start-up, so a
 * server that is down or slow cannot hold the process), its tools listed once per connection,
 * its calls bounded by a time limit, and a circuit breaker (src/llm/circuit-breaker.ts) per
 * server: `threshold` consecutive failures (a connection that cannot be made, a call that times
 * out, a transport that closes under a call) open it; while open every call fails at once with
 * the last error; after the cool-down one trial goes through. A tool answering with an error
 * (`isError`) is the tool's verdict, not the server's failure: it does not count.
 */
import type * as McpClientModule from '@modelcontextprotocol/client';
import type { Client, Tool } from '@modelcontextprotocol/client';
import type * as McpStdioModule from '@modelcontextprotocol/client/stdio';
import type { SecretProvider } from '../../config/index.js';
import { errorMessage } from '../../errors.js';
import { CircuitBreaker } from '../../llm/index.js';
import type { McpSecretRef, McpServerConfig } from './mcp-config.js';

/** What a server is, for `GET /api/tools`. */
export const MCP_SERVER_STATES = {
  /** Not asked yet (servers are connected on first use). */
  IDLE: 'idle',
  CONNECTED: 'connected',
  /** The last connection or call failed in the server's fault; `error` says how. */
  DOWN: 'down',
} as const;
export type McpServerState = (typeof MCP_SERVER_STATES)[keyof typeof MCP_SERVER_STATES];

/** A tool as the server lists it. */
export interface McpListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What one call answered: the result's content, or the tool's own error. */
export interface McpCallAnswer {
  isError: boolean;
  result: unknown;
}

export interface McpConnectionOptions {
  config: McpServerConfig;
  secrets: SecretProvider;
  /** The base environment of stdio children (the shell tool's: PATH, HOME, locale). */
  childEnv: Readonly<Record<string, string>>;
  /** Time limit of a call when the server sets none (ms). */
  defaultTimeoutMs: number;
  breakerThreshold: number;
  breakerCooldownMs: number;
  now?: () => number;
  /** The client's name and version told to the server. */
  clientInfo: { name: string; version: string };
}

/** The failure of a server (not of a tool): the registry reports it as the tool's error. */
export class McpServerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpServerError';
  }
}

export interface McpConnection {
  readonly name: string;
  /** The state now and, when down, why. */
  status(): { state: McpServerState; error?: string };
  /** The server's tools, connecting first when needed; rejects with an McpServerError. */
  tools(): Promise<readonly McpListedTool[]>;
  /** Calls `tool`; rejects with an McpServerError when the server fails (not when the tool does). */
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallAnswer>;
  close(): Promise<void>;
}

interface Live {
  client: Client;
  tools: readonly McpListedTool[];
}

export function createMcpConnection(options: McpConnectionOptions): McpConnection {
  const { config } = options;
  const label = `MCP server '${config.name}'`;
  const breaker = new CircuitBreaker({
    threshold: options.breakerThreshold,
    cooldownMs: options.breakerCooldownMs,
    now: options.now ?? Date.now,
  });
  let live: Promise<Live> | undefined;
  let state: McpServerState = MCP_SERVER_STATES.IDLE;
  let lastError: string | undefined;
  let closed = false;

  const down = (message: string, cause?: unknown): McpServerError => {
    state = MCP_SERVER_STATES.DOWN;
    lastError = message;
    return new McpServerError(message, { cause });
  };

  /** Whether the breaker lets a call out; throws the refusal when it does not. */
  const acquire = (): void => {
    if (closed) throw new McpServerError(`${label}: closed`);
    if (breaker.tryAcquire()) return;
    const seconds = Math.ceil(breaker.retryInMs() / 1000);
    throw new McpServerError(
      `${label} is unavailable (circuit open after repeated failures${lastError === undefined ? '' : `; last: ${lastError}`}); next trial in ${seconds} s`,
    );
  };

  // The SDK is loaded on the first connection: a process with no MCP server in use (every CLI
  // command, most services) never loads it (issue 25: start-up).
  let sdk: Promise<Sdk> | undefined;
  const loadSdk = (): Promise<Sdk> => (sdk ??= importSdk());
  let loaded: Sdk | undefined;

  const connect = async (): Promise<Live> => {
    loaded = await loadSdk();
    const client = new loaded.Client(options.clientInfo, { capabilities: {} });
    const transport = transportOf(config, options, loaded);
    const signal = AbortSignal.timeout(config.connectTimeoutMs);
    try {
      await client.connect(transport, { signal, timeout: config.connectTimeoutMs });
      const listed = await client.listTools(undefined, {
        signal,
        timeout: config.connectTimeoutMs,
      });
      const tools = listed.tools.map(listedTool);
      // A transport that closes (the child exited, the session ended) drops the connection:
      // the next use connects again, if the breaker lets it.
      client.onclose = () => {
        if (live === current) live = undefined;
        if (!closed && state === MCP_SERVER_STATES.CONNECTED) {
          state = MCP_SERVER_STATES.DOWN;
          lastError = `${label}: connection closed`;
        }
      };
      state = MCP_SERVER_STATES.CONNECTED;
      lastError = undefined;
      return { client, tools };
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  };
  let current: Promise<Live> | undefined;

  const ensure = async (): Promise<Live> => {
    if (live !== undefined) return live;
    acquire();
    current = connect();
    live = current;
    try {
      const made = await current;
      breaker.succeeded();
      return made;
    } catch (error) {
      live = undefined;
      breaker.failed();
      if (error instanceof McpServerError) throw down(error.message, error);
      const timedOut = isTimeout(error, loaded);
      throw down(
        timedOut
          ? `${label}: no answer within ${config.connectTimeoutMs / 1000} s while connecting`
          : `${label}: cannot connect: ${errorMessage(error)}`,
        error,
      );
    }
  };

  return {
    name: config.name,
    status: () => ({ state, ...(lastError === undefined ? {} : { error: lastError }) }),
    tools: async () => (await ensure()).tools,
    async call(tool, args, signal) {
      const { client } = await ensure();
      // A connected server's calls pass the breaker too: one whose calls keep timing out trips it.
      acquire();
      const timeoutMs = config.timeoutMs ?? options.defaultTimeoutMs;
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        const result = await client.callTool(
          { name: tool, arguments: args },
          { signal: AbortSignal.any([signal, timeout]), timeout: timeoutMs },
        );
        breaker.succeeded();
        state = MCP_SERVER_STATES.CONNECTED;
        lastError = undefined;
        return {
          isError: result.isError === true,
          result: resultValue(result),
        };
      } catch (error) {
        if (signal.aborted && !timeout.aborted) {
          // The run was cancelled: not the server's fault.
          breaker.released();
          throw error;
        }
        breaker.failed();
        if (timeout.aborted || isTimeout(error, loaded)) {
          throw down(`${label}: tool '${tool}' gave no answer within ${timeoutMs / 1000} s`, error);
        }
        if (loaded !== undefined && error instanceof loaded.ProtocolError) {
          // The server answered with a JSON-RPC error (unknown tool, bad params): it is up.
          breaker.succeeded();
          throw new McpServerError(`${label}: ${errorMessage(error)}`, { cause: error });
        }
        throw down(`${label}: call to '${tool}' failed: ${errorMessage(error)}`, error);
      }
    },
    async close() {
      closed = true;
      const made = live;
      live = undefined;
      await made?.then((l) => l.client.close()).catch(() => undefined);
    },
  };
}

type Sdk = typeof McpClientModule & Pick<typeof McpStdioModule, 'StdioClientTransport'>;

async function importSdk(): Promise<Sdk> {
  const [client, stdio] = await Promise.all([
    import('@modelcontextprotocol/client'),
    import('@modelcontextprotocol/client/stdio'),
  ]);
  return { ...client, StdioClientTransport: stdio.StdioClientTransport };
}

function transportOf(config: McpServerConfig, options: McpConnectionOptions, sdk: Sdk) {
  if (config.transport === 'http') {
    const headers: Record<string, string> = {};
    for (const [header, ref] of Object.entries(config.headers)) {
      headers[header] = secretValue(config.name, ref, options.secrets);
    }
    return new sdk.StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers },
    });
  }
  const env: Record<string, string> = { ...options.childEnv };
  for (const [variable, value] of Object.entries(config.env)) {
    env[variable] =
      typeof value === 'string' ? value : secretValue(config.name, value, options.secrets);
  }
  return new sdk.StdioClientTransport({
    command: config.command,
    args: [...config.args],
    env,
    stderr: 'ignore',
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
  });
}

function secretValue(server: string, ref: McpSecretRef, secrets: SecretProvider): string {
  const value = secrets.get(ref.secret);
  if (value === undefined) {
    throw new McpServerError(`MCP server '${server}': secret ${ref.secret} is not set`);
  }
  return `${ref.prefix ?? ''}${value}`;
}

function listedTool(tool: Tool): McpListedTool {
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema,
  };
}

interface CallResultShape {
  content?: readonly Record<string, unknown>[];
  structuredContent?: unknown;
}

/**
 * The value of a result: its structured content when it has some; else its text when all its
 * content is text; else the content list with binary data left out (its type and size kept).
 */
function resultValue(result: CallResultShape): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  if (content.every((item) => item.type === 'text')) {
    return content.map((item) => String(item.text)).join('\n');
  }
  return content.map((item) => {
    if (typeof item.data === 'string') {
      const { data, ...rest } = item;
      return { ...rest, omitted_bytes: Math.floor((data.length * 3) / 4) };
    }
    return item;
  });
}

function isTimeout(error: unknown, sdk: Sdk | undefined): boolean {
  if (sdk !== undefined && error instanceof sdk.SdkError) {
    return error.code === sdk.SdkErrorCode.RequestTimeout;
  }
  return error instanceof Error && error.name === 'TimeoutError';
}
