import type { Config } from '../config/index.js';
import type { ToolsOptions } from './toolkit.js';

/** The tool settings of a service or CLI configuration (the AGENTIC_* tool variables). */
export function toolsOptionsFromConfig(config: Config): ToolsOptions {
  return {
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
  };
}
