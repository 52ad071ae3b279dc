/**
 * Loads the custom agents of the service from a JavaScript module (`AGENTIC_AGENTS_MODULE`):
 * its `agents` export, or else its default export, must be a record of agent functions by name.
 */
import { pathToFileURL } from 'node:url';
import { ConfigError, errorMessage } from '../errors.js';
import { customAgentProblems } from './custom-agents.js';
import type { Agent } from './types.js';

/** How the module is imported; tests and embedders may pass another loader. */
export type ModuleImporter = (url: string) => Promise<Record<string, unknown>>;

const importModule: ModuleImporter = (url) => import(url) as Promise<Record<string, unknown>>;

/**
 * The record of agents exported by the module at `path` (absolute).
 * @throws ConfigError naming the variable, the module and what is wrong (one message)
 */
export async function loadAgentsModule(
  path: string,
  importer: ModuleImporter = importModule,
): Promise<Record<string, Agent>> {
  const fail = (problem: string): ConfigError =>
    new ConfigError([`AGENTIC_AGENTS_MODULE=${JSON.stringify(path)}: ${problem}`]);
  let exports: Record<string, unknown>;
  try {
    exports = await importer(pathToFileURL(path).href);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'ENOENT') throw fail('module not found');
    throw fail(`module cannot be loaded: ${errorMessage(error).split('\n')[0] ?? ''}`);
  }
  const agents = exports.agents ?? exports.default;
  if (agents === undefined) {
    throw fail('export a record of agents as `agents` or as the default export');
  }
  const problems = customAgentProblems(agents);
  if (problems.length > 0) throw fail(problems.join('; '));
  return { ...(agents as Record<string, Agent>) };
}
