import {
  createInProcessMemoryStore,
  namespacedMemory,
  openFileMemoryStore,
  SHARED_NAMESPACE,
  type NamespaceableMemoryStore,
} from '../memory/index.js';
import {
  builtInApprovalProvider,
  type ApprovalProvider,
  type ApprovalProviderName,
} from './approval.js';
import { createFileTools } from './file-tools.js';
import { createHttpTools, type AddressLookup } from './http-tools.js';
import { createMemoryTools } from './memory-tools.js';
import {
  createToolRegistry,
  type ToolCaller,
  type ToolCallReport,
  type ToolRegistry,
} from './registry.js';
import { createShellTool } from './shell-tool.js';
import type { SecretProvider } from '../config/index.js';
import type { McpConfig } from './mcp/mcp-config.js';
import { createMcpToolSource, type McpToolSource } from './mcp/mcp-tools.js';
import type { ToolCallJournal } from './tool-call-journal.js';

/** Tool settings (the AGENTIC_* tool variables; docs/tools.md). */
export interface ToolsOptions {
  /** AGENTIC_FILE_BASE_DIR. @default undefined (file tools and `shell` refuse every call) */
  fileBaseDir?: string;
  /** AGENTIC_SHELL_ALLOWED_COMMANDS. @default [] (every command blocked) */
  shellAllowedCommands?: readonly string[];
  /** AGENTIC_BLOCK_PRIVATE_IPS. @default false */
  blockPrivateIps?: boolean;
  /** AGENTIC_MEMORY_PATH. @default undefined (in-process memory) */
  memoryPath?: string;
  /** A memory store to use instead (e.g. `createVectorMemoryStore()`); wins over `memoryPath`. */
  memoryStore?: NamespaceableMemoryStore;
  /** An approval provider, or a built-in's name (AGENTIC_APPROVAL_PROVIDER). @default 'deny' */
  approval?: ApprovalProvider | ApprovalProviderName;
  /** AGENTIC_APPROVAL_TIMEOUT_SECONDS, in ms: how long the `http` provider waits. @default 300000 */
  approvalTimeoutMs?: number;
  /** AGENTIC_APPROVAL_EVENT_ARGUMENTS: tool arguments in approval events and listings. @default false */
  approvalEventArguments?: boolean;
  /** Tools the `policy` provider approves (AGENTIC_APPROVAL_ALLOWED_TOOLS). @default [] */
  approvalAllowedTools?: readonly string[];
  /** The whole environment of `shell` children. @default `{PATH: '/usr/local/bin:/usr/bin:/bin'}` */
  childEnv?: Readonly<Record<string, string>>;
  /** AGENTIC_TOOL_MAX_BYTES: file size, response size and kept output (bytes). @default 1048576 */
  maxBytes?: number;
  /** AGENTIC_TOOL_TIMEOUT_SECONDS, in ms here: shell and HTTP calls. @default 30000 */
  timeoutMs?: number;
  /** AGENTIC_HTTP_MAX_REDIRECTS. @default 5 */
  maxRedirects?: number;
  /** Name resolution for the HTTP tools (tests). @default the system resolver */
  lookup?: AddressLookup;
  /** AGENTIC_AGENT_MAX_ROUNDS: rounds of tool calls of an LLM step's agent loop. @default 8 */
  agentMaxRounds?: number;
  /** AGENTIC_AGENT_MAX_CALLS_PER_ROUND: tool calls run per round. @default 12 */
  agentMaxCallsPerRound?: number;
  /** AGENTIC_TOOL_RESULT_MAX_CHARS: characters of a tool result given to the model. @default 12000 */
  toolResultMaxChars?: number;
  /** Told of every finished tool call (metrics). @default none */
  onToolCall?: (report: ToolCallReport) => void;
  /** Addresses the private-IP block refuses (tests). @default private, loopback, link-local */
  isBlockedAddress?: (address: string) => boolean;
  /** The MCP servers (AGENTIC_MCP_CONFIG, read by `loadMcpConfig`). @default none */
  mcp?: McpConfig;
  /** Where MCP headers and `{secret: NAME}` variables come from. @default none (such a server is down) */
  secrets?: SecretProvider;
  /** Records MCP tool calls' answers so a resumed run does not repeat them. @default none */
  callJournal?: ToolCallJournal;
}

/** A runtime's tools and memory. */
export interface ToolKit {
  registry: ToolRegistry;
  /** The MCP servers' tools (undefined without AGENTIC_MCP_CONFIG). */
  mcp: McpToolSource | undefined;
  memory: NamespaceableMemoryStore;
  /**
   * Calls a tool for a step of `caller.workflow`, with that workflow's memory; `onApproval` is
   * told while the call waits for the approval gate.
   */
  call(
    name: string,
    args: unknown,
    caller: ToolCaller,
    signal: AbortSignal,
    onApproval?: (waiting: boolean) => void,
  ): Promise<unknown>;
  close(): Promise<void>;
}

/** Builds the built-in tools; opens the memory file when `memoryPath` is set. */
export async function createToolKit(options: ToolsOptions = {}): Promise<ToolKit> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const file =
    options.memoryPath === undefined ? undefined : await openFileMemoryStore(options.memoryPath);
  const memory = options.memoryStore ?? file ?? createInProcessMemoryStore();
  const http = createHttpTools({
    blockPrivateIps: options.blockPrivateIps ?? false,
    maxRedirects: options.maxRedirects ?? 5,
    maxResponseBytes: maxBytes,
    timeoutMs,
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    ...(options.isBlockedAddress === undefined
      ? {}
      : { isBlockedAddress: options.isBlockedAddress }),
  });
  const approval =
    typeof options.approval === 'object'
      ? options.approval
      : builtInApprovalProvider(
          options.approval ?? 'deny',
          options.approvalAllowedTools,
          options.approvalTimeoutMs,
        );
  const mcp =
    options.mcp === undefined || options.mcp.servers.length === 0
      ? undefined
      : createMcpToolSource({
          config: options.mcp,
          secrets: options.secrets ?? { get: () => undefined },
          childEnv: options.childEnv ?? { PATH: '/usr/local/bin:/usr/bin:/bin' },
          timeoutMs,
        });
  const registry = createToolRegistry(
    [
      ...createFileTools({
        baseDir: options.fileBaseDir,
        maxFileBytes: maxBytes,
        maxListEntries: 1000,
      }),
      createShellTool({
        allowedCommands: options.shellAllowedCommands ?? [],
        baseDir: options.fileBaseDir,
        env: options.childEnv ?? { PATH: '/usr/local/bin:/usr/bin:/bin' },
        timeoutMs,
        maxOutputBytes: maxBytes,
      }),
      ...http.tools,
      ...createMemoryTools(),
    ],
    approval,
    options.onToolCall,
    mcp,
    options.callJournal,
  );
  return {
    registry,
    mcp,
    memory,
    call: (name, args, caller, signal, onApproval) =>
      registry.call(name, args, caller, {
        signal,
        ...(onApproval === undefined ? {} : { onApproval }),
        memory: (shared) =>
          namespacedMemory(memory, shared ? SHARED_NAMESPACE : `workflow:${caller.workflow}`),
      }),
    close: async () => {
      await mcp?.close();
      await http.close();
      await file?.close();
    },
  };
}
