/**
 * The options shared by the commands that read workflows or write runs, as commander parses
 * them; apart from ./settings.ts, which loads the configuration, so that registering a command
 * loads no more than commander (issue 25: start-up).
 */
import type { Command } from 'commander';

/** What commander parses from the shared options. */
export interface SettingsOptions {
  workflowsDir?: string;
  runsDir?: string;
  /** false when `--no-llm` is given. */
  llm?: boolean;
}

/** Adds the shared options to a command. */
export function withSettings(command: Command): Command {
  return command
    .option('-w, --workflows-dir <dir>', 'workflows directory (overrides AGENTIC_WORKFLOWS_DIR)')
    .option('-r, --runs-dir <dir>', 'run-file directory (overrides AGENTIC_RUNS_DIR)')
    .option('--no-llm', 'deterministic placeholder LLM answers (sets AGENTIC_NO_LLM=1)');
}
