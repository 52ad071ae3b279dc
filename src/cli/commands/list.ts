import type { Command } from 'commander';
import type { CliContext } from './index.js';
import { out } from '../io.js';
import { withSettings, type SettingsOptions } from '../settings-options.js';

/** `agentic list`: the workflow names of the workflows directory. */
export function registerList(program: Command, context: CliContext): void {
  withSettings(
    program.command('list').description('list the workflows of the workflows directory'),
  ).action(async (options: SettingsOptions) => {
    // The directory's files only: listing parses no workflow (no YAML parser, no compiler).
    const [{ settings }, { workflowFiles }] = await Promise.all([
      import('../settings.js'),
      import('../../workflow/workflow-files.js'),
    ]);
    const files = workflowFiles(settings(options, context.env).workflowsDir);
    for (const name of await files.list()) out(name);
  });
}
