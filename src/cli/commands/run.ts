import { createLlmService } from '../../llm/llm-service.js';
import { InvalidArgumentError, type Command } from 'commander';
import { ADAPTERS, type AdapterName, type RunHandle } from '../../engine/types.js';
import { isAdapterName } from '../../config/adapter-names.js';
import { ERROR_CODES, isAppError } from '../../errors.js';
import type { CliContext } from './index.js';
import { err, out, parseJsonObject } from '../io.js';
import { progressLine } from '../progress.js';
import { createCliRuntime } from '../cli-runtime.js';
import { settings, withSettings, type SettingsOptions } from '../settings.js';
import { readWorkflowArg, workflowNotFound } from '../workflow-arg.js';

interface RunOptions extends SettingsOptions {
  input?: Record<string, unknown>;
  adapter?: AdapterName;
  json?: boolean;
}

/** Exit code of a run cancelled by Ctrl-C (128 + SIGINT), as shells report it. */
const INTERRUPTED_EXIT = 130;

function parseAdapter(text: string): AdapterName {
  if (!isAdapterName(text)) throw new InvalidArgumentError(`one of ${ADAPTERS.join(', ')}`);
  return text;
}

/**
 * `agentic run <workflow>`: runs a workflow file or named workflow, printing a line per step
 * on stderr; stdout gets the final output (or, with `--json`, only the run record). Ctrl-C
 * cancels the run, which is persisted `failed` with error `cancelled`; a second Ctrl-C quits.
 */
export function registerRun(program: Command, context: CliContext): void {
  withSettings(
    program
      .command('run <workflow>')
      .description('run a workflow (a YAML file, or a name in the workflows directory)')
      .option('-i, --input <json>', 'workflow inputs as a JSON object', parseJsonObject)
      .option('-a, --adapter <name>', 'engine adapter: graph or native', parseAdapter)
      .option('--json', 'print only the run record (JSON) on stdout, no progress'),
  ).action(async (workflow: string, options: RunOptions) => {
    const config = settings(options, context.env);
    const arg = await readWorkflowArg(workflow);
    const llm = config.noLlm ? undefined : createLlmService(config.llm);
    const runtime = await createCliRuntime(config, llm);
    let handle: RunHandle;
    try {
      handle = await runtime.start({
        workflow: arg.kind === 'file' ? arg.text : arg.name,
        input: options.input ?? {},
        ...(options.adapter !== undefined ? { adapter: options.adapter } : {}),
      });
    } catch (error) {
      await runtime.shutdown({ graceMs: 0 });
      await llm?.close();
      if (isAppError(error) && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
        throw workflowNotFound(workflow, config.workflowsDir);
      }
      throw error;
    }
    let interrupted = false;
    const onSignal = (): void => {
      if (interrupted) process.exit(INTERRUPTED_EXIT);
      interrupted = true;
      err('cancelling the run (press Ctrl-C again to quit at once)');
      runtime.cancel(handle.runId, 'cancelled');
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      if (options.json !== true) {
        for await (const event of handle.events) {
          const line = progressLine(event);
          if (line !== undefined) err(line);
        }
      }
      // The run file is written before `done` resolves, so a cancelled run is on disk as failed.
      const record = await handle.done;
      out(JSON.stringify(options.json === true ? record : (record.final_output ?? null), null, 2));
      if (interrupted) process.exitCode = INTERRUPTED_EXIT;
      else if (record.status !== 'success') process.exitCode = 1;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await runtime.shutdown({ graceMs: 0 });
      await llm?.close();
    }
  });
}
