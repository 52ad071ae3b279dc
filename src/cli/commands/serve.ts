import type { Command } from 'commander';
import type { CliContext } from './index.js';

/** `agentic serve`: the HTTP service, configured by AGENTIC_* variables and these options. */
export function registerServe(program: Command, context: CliContext): void {
  program
    .command('serve')
    .description('start the HTTP service (configured by AGENTIC_* variables)')
    .option('-p, --port <port>', 'listening port (overrides AGENTIC_PORT)')
    .option('-H, --host <host>', 'listening address (overrides AGENTIC_HOST)')
    .option('-w, --workflows-dir <dir>', 'workflows directory (overrides AGENTIC_WORKFLOWS_DIR)')
    .option('-r, --runs-dir <dir>', 'run-file directory (overrides AGENTIC_RUNS_DIR)')
    .option('--no-llm', 'deterministic placeholder LLM answers (sets AGENTIC_NO_LLM=1)')
    .option(
      '--role <role>',
      'all (HTTP and runs), api (HTTP; runs go to the queue; needs REDIS_URL) or worker (overrides AGENTIC_ROLE)',
    )
    .action(
      async (options: {
        port?: string;
        host?: string;
        workflowsDir?: string;
        runsDir?: string;
        llm?: boolean;
        role?: string;
      }) => {
        const env = { ...context.env };
        if (options.port !== undefined) env.AGENTIC_PORT = options.port;
        if (options.host !== undefined) env.AGENTIC_HOST = options.host;
        if (options.workflowsDir !== undefined) env.AGENTIC_WORKFLOWS_DIR = options.workflowsDir;
        if (options.runsDir !== undefined) env.AGENTIC_RUNS_DIR = options.runsDir;
        if (options.llm === false) env.AGENTIC_NO_LLM = '1';
        if (options.role !== undefined) env.AGENTIC_ROLE = options.role;
        const { runService } = await import('../../http/service.js');
        await runService(env);
      },
    );
}
