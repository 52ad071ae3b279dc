import { InvalidArgumentError, type Command } from 'commander';
import type { RunHandle } from '../../engine/types.js';
import type { WorkflowRerunRequest } from '../../generated/api/rerun-request.js';
import type { WorkflowRunResponse } from '../../generated/api/run-response.js';
import type { CliContext } from './index.js';
import { isAppError } from '../../errors.js';
import { CliError, err, out } from '../io.js';
import { progressLine } from '../progress.js';
import { createServiceClient, detailOf, parseServiceUrl } from '../service-client.js';
import { withSettings, type SettingsOptions } from '../settings-options.js';

interface RerunOptions extends SettingsOptions {
  from: string;
  input?: Record<string, string>;
  json?: boolean;
  url?: string;
}

/** Exit code of a run cancelled by Ctrl-C (128 + SIGINT), as `agentic run` says. */
const INTERRUPTED_EXIT = 130;

/** `--input k=v`, repeatable: one input each (strings; numbers and booleans convert). */
function collectInput(
  text: string,
  inputs: Record<string, string> | undefined,
): Record<string, string> {
  const at = text.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected name=value');
  return { ...inputs, [text.slice(0, at)]: text.slice(at + 1) };
}

/**
 * `agentic rerun <run> --from <step>`: a fork of a finished run (docs/rerun.md) that reuses the
 * run file's outcomes of the steps upstream of `<step>` and executes it and its downstream
 * steps, here, like `agentic run` (progress on stderr, the output or `--json` record on stdout);
 * with `--url`, a running service does it (`POST /api/runs/{run_id}/rerun`) and the new run's id
 * is printed.
 */
export function registerRerun(program: Command, context: CliContext): void {
  withSettings(
    program
      .command('rerun <run>')
      .description(
        'rerun a finished run from one of its steps: earlier steps are reused from its run file, the step and those after it run again',
      )
      .requiredOption('--from <step>', 'the step to run again (with every step downstream of it)')
      .option(
        '-i, --input <name=value>',
        'a new value of a workflow input (repeatable); the others are the run’s',
        collectInput,
      )
      .option('--json', 'print only the new run record (JSON) on stdout, no progress')
      .option(
        '-u, --url <url>',
        'ask a running service instead (its API key from AGENTIC_API_KEY); prints the new run id',
        parseServiceUrl,
      ),
  ).action(async (run: string, options: RerunOptions) => {
    if (options.url !== undefined) {
      await rerunRemotely(run, { ...options, url: options.url }, context);
      return;
    }
    const { settings } = await import('../settings.js');
    const config = settings(options, context.env);
    const [{ createLlmService }, { composeCommandRuntime }] = await Promise.all([
      import('../../llm/llm-service.js'),
      import('../../service/compose.js'),
    ]);
    const llm = config.noLlm ? undefined : createLlmService(config.llm);
    const runtime = await composeCommandRuntime(config, llm);
    let handle: RunHandle | undefined;
    let interrupted = false;
    const onSignal = (): void => {
      if (interrupted) process.exit(INTERRUPTED_EXIT);
      interrupted = true;
      err('cancelling the run (press Ctrl-C again to quit at once)');
      if (handle !== undefined) runtime.cancel(handle.runId, 'cancelled');
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // As in `agentic run`: the process lives until the run's file is written.
    const keepAlive = setInterval(() => undefined, 2 ** 30);
    try {
      handle = await runtime
        .rerun(run, {
          fromStep: options.from,
          inputs: options.input ?? {},
          inputLocPrefix: ['input'],
        })
        .catch((error: unknown) => {
          // The runtime names the option as the API does (`fromStep`); here it is `--from`.
          if (isAppError(error) && error.details?.[0]?.loc[0] === 'fromStep') {
            throw new CliError(`--from: ${error.message}`);
          }
          throw error;
        });
      if (interrupted) runtime.cancel(handle.runId, 'cancelled');
      if (options.json !== true) err(`run ${handle.runId}: a rerun of ${run} from ${options.from}`);
      for await (const event of handle.events) {
        if (options.json === true) continue;
        const line = progressLine(event);
        if (line !== undefined) err(line);
      }
      const record = await handle.done;
      if (options.json === true) out(JSON.stringify(record, null, 2));
      else out(JSON.stringify(record.final_output ?? null, null, 2));
      if (interrupted) process.exitCode = INTERRUPTED_EXIT;
      else if (record.status !== 'success') process.exitCode = 1;
    } finally {
      clearInterval(keepAlive);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await runtime.shutdown({ graceMs: 0 });
      await llm?.close();
    }
  });
}

async function rerunRemotely(
  run: string,
  options: RerunOptions & { url: string },
  context: CliContext,
): Promise<void> {
  const { loadConfig } = await import('../../config/load-config.js');
  const service = createServiceClient(options.url, loadConfig(context.env).apiKey);
  const request: WorkflowRerunRequest = { from_step: options.from, inputs: options.input ?? {} };
  const { status, body } = await service.request(
    'POST',
    `/api/runs/${encodeURIComponent(run)}/rerun`,
    request,
  );
  if (status !== 200) throw new CliError(`${service.url}: HTTP ${status}: ${detailOf(body)}`);
  const { run_id: runId } = body as WorkflowRunResponse;
  out(options.json === true ? JSON.stringify(body) : runId);
}
