import type { Command } from 'commander';
import { createWorkflowRegistry } from '../../workflow/index.js';
import type { CliContext } from './index.js';
import { out } from '../io.js';
import { settings, withSettings, type SettingsOptions } from '../settings.js';

/** `agentic list`: the workflow names of the workflows directory. */
export function registerList(program: Command, context: CliContext): void {
  withSettings(
    program.command('list').description('list the workflows of the workflows directory'),
  ).action(async (options: SettingsOptions) => {
    const registry = createWorkflowRegistry({ dir: settings(options, context.env).workflowsDir });
    for (const name of await registry.list()) out(name);
  });
}
