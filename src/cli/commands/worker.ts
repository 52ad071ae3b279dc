import type { Command } from 'commander';
import type { CliContext } from './index.js';

/**
 * `agentic worker`: a worker executing queued runs (`AGENTIC_ROLE=worker`), configured by
 * AGENTIC_* variables and REDIS_URL (required) and these options. No HTTP listener.
 */
export function registerWorker(program: Command, context: CliContext): void {
  program
    .command('worker')
    .description('execute runs queued by api instances (needs REDIS_URL; AGENTIC_* variables)')
    .option('-c, --concurrency <n>', 'runs at once (overrides AGENTIC_WORKER_CONCURRENCY)')
    .option('-w, --workflows-dir <dir>', 'workflows directory (overrides AGENTIC_WORKFLOWS_DIR)')
    .option('-r, --runs-dir <dir>', 'shared run-file directory (overrides AGENTIC_RUNS_DIR)')
    .option('--no-llm', 'deterministic placeholder LLM answers (sets AGENTIC_NO_LLM=1)')
    .action(
      async (options: {
        concurrency?: string;
        workflowsDir?: string;
        runsDir?: string;
        llm?: boolean;
      }) => {
        const env: Record<string, string | undefined> = { ...context.env, AGENTIC_ROLE: 'worker' };
        if (options.concurrency !== undefined) env.AGENTIC_WORKER_CONCURRENCY = options.concurrency;
        if (options.workflowsDir !== undefined) env.AGENTIC_WORKFLOWS_DIR = options.workflowsDir;
        if (options.runsDir !== undefined) env.AGENTIC_RUNS_DIR = options.runsDir;
        if (options.llm === false) env.AGENTIC_NO_LLM = '1';
        const { runService } = await import('../../http/service.js');
        await runService(env);
      },
    );
}
