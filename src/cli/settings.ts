/**
 * Options shared by the commands that read workflows or write runs (`--workflows-dir`,
 * `--runs-dir`, `--no-llm`): they override the matching AGENTIC_* variables, then the
 * configuration is loaded and checked exactly as the service does it.
 */
import type { SettingsOptions } from './settings-options.js';
import type { Agent } from '../agents/types.js';
import { loadConfig, type Config } from '../config/index.js';

export { withSettings, type SettingsOptions } from './settings-options.js';

/** The configuration: the environment with the command's options applied. */
export function settings(
  options: SettingsOptions,
  baseEnv: Readonly<Record<string, string | undefined>>,
): Config {
  const env = { ...baseEnv };
  if (options.workflowsDir !== undefined) env.AGENTIC_WORKFLOWS_DIR = options.workflowsDir;
  if (options.runsDir !== undefined) env.AGENTIC_RUNS_DIR = options.runsDir;
  if (options.llm === false) env.AGENTIC_NO_LLM = '1';
  return loadConfig(env);
}

/** The custom agents of `AGENTIC_AGENTS_MODULE`, or none. */
export async function customAgents(config: Config): Promise<Record<string, Agent>> {
  if (config.agentsModule === undefined) return {};
  // Imported when a module is configured (`list` and `--version` never need it).
  const { loadAgentsModule } = await import('../agents/agents-module.js');
  return loadAgentsModule(config.agentsModule);
}
