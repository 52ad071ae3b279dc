import type { Command } from 'commander';
import { isAppError, ERROR_CODES } from '../../errors.js';
import type { CliContext } from './index.js';
import { out } from '../io.js';
import { withSettings, type SettingsOptions } from '../settings-options.js';
import { readWorkflowArg, workflowNotFound } from '../workflow-arg.js';

/** `agentic validate <workflow>`: a YAML file or a workflow name, checked fully; runs nothing. */
export function registerValidate(program: Command, context: CliContext): void {
  withSettings(
    program
      .command('validate <workflow>')
      .description(
        'validate a workflow YAML file or a workflow by name (schema, dependencies, cycles, expressions)',
      ),
  ).action(async (workflow: string, options: SettingsOptions) => {
    const [
      { customAgents, settings },
      { createWorkflowRegistry },
      { customAgentNames },
      { loadMcpConfig },
    ] = await Promise.all([
      import('../settings.js'),
      import('../../workflow/index.js'),
      import('../../agents/custom-agents.js'),
      import('../../tools/mcp/mcp-config.js'),
    ]);
    const config = settings(options, context.env);
    // The service's check: `mcp:<server>:<tool>` names only of the servers AGENTIC_MCP_CONFIG has.
    const mcpServers = new Set(
      config.mcpConfigFile === undefined
        ? []
        : loadMcpConfig(config.mcpConfigFile).servers.map((server) => server.name),
    );
    const registry = createWorkflowRegistry({
      dir: config.workflowsDir,
      customAgents: customAgentNames(await customAgents(config)),
      mcpServers,
      limits: config.limits,
    });
    const arg = await readWorkflowArg(workflow);
    let compiled;
    if (arg.kind === 'file') {
      compiled = registry.compile(registry.parse(arg.text), arg.stem);
    } else {
      try {
        compiled = (await registry.get(arg.name)).compiled;
      } catch (error) {
        if (isAppError(error) && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
          throw workflowNotFound(workflow, config.workflowsDir);
        }
        throw error;
      }
    }
    out(`valid: ${compiled.name} (${compiled.steps.length} steps)`);
  });
}
