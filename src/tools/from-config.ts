import type { Config } from '../config/index.js';
import { createVectorMemoryStore } from '../memory/index.js';
import { embedderFor, type EmbeddingProviders } from '../memory/provider-embedder.js';
import { loadMcpConfig } from './mcp/mcp-config.js';
import type { ToolsOptions } from './toolkit.js';

/** No LLM layer (no-LLM CLI commands): only the hashing embedder is available. */
const NO_PROVIDERS: EmbeddingProviders = {
  get: () => undefined,
  missing: () => 'no LLM layer in no-LLM mode',
};

/**
 * The tool settings of a service or CLI configuration (the AGENTIC_* tool variables).
 * `providers` (the LLM layer's) serve AGENTIC_MEMORY_EMBEDDINGS; throws a config AppError when it
 * names a provider that is not configured, or when the MCP servers file (AGENTIC_MCP_CONFIG)
 * cannot be read or is wrong: checked here, at start-up; its servers are connected on first use.
 */
export function toolsOptionsFromConfig(
  config: Config,
  providers: EmbeddingProviders = NO_PROVIDERS,
): ToolsOptions {
  return {
    ...(config.memoryEmbeddings === undefined
      ? {}
      : {
          memoryStore: createVectorMemoryStore({
            embed: embedderFor(config.memoryEmbeddings, providers, {
              timeoutMs: config.toolTimeoutMs,
            }),
          }),
        }),
    ...(config.fileBaseDir === undefined ? {} : { fileBaseDir: config.fileBaseDir }),
    shellAllowedCommands: config.shellAllowedCommands,
    blockPrivateIps: config.blockPrivateIps,
    ...(config.memoryPath === undefined ? {} : { memoryPath: config.memoryPath }),
    approval: config.approvalProvider,
    approvalAllowedTools: config.approvalAllowedTools,
    approvalTimeoutMs: config.approvalTimeoutMs,
    approvalEventArguments: config.approvalEventArguments,
    childEnv: config.toolChildEnv,
    maxBytes: config.toolMaxBytes,
    timeoutMs: config.toolTimeoutMs,
    maxRedirects: config.httpMaxRedirects,
    agentMaxRounds: config.agentMaxRounds,
    agentMaxCallsPerRound: config.agentMaxCallsPerRound,
    toolResultMaxChars: config.toolResultMaxChars,
    ...(config.mcpConfigFile === undefined
      ? {}
      : { mcp: loadMcpConfig(config.mcpConfigFile), secrets: config.llm.secrets }),
  };
}
