import { InvalidArgumentError, type Command } from 'commander';
import { ADAPTERS, type AdapterName, type RunHandle } from '../../engine/types.js';
import { isAdapterName } from '../../config/adapter-names.js';
import { ERROR_CODES, isAppError } from '../../errors.js';
import type { CliContext } from './index.js';
import { err, out, parseJsonObject } from '../io.js';
import { progressLine } from '../progress.js';
import type { InspectorServer } from '../inspector-server.js';
import { withSettings, type SettingsOptions } from '../settings-options.js';
import { readWorkflowArg, workflowNotFound } from '../workflow-arg.js';

interface RunOptions extends SettingsOptions {
  input?: Record<string, unknown>;
  adapter?: AdapterName;
  json?: boolean;
  /** `--inspect` alone is true (a free port); `--inspect <port>` a port. */
  inspect?: true | number;
  budgetUsd?: number;
  budgetTokens?: number;
}

function parsePositiveNumber(text: string): number {
  const value = Number(text);
  if (!(value > 0)) throw new InvalidArgumentError('a positive number');
  return value;
}

function parsePositiveInteger(text: string): number {
  const value = parsePositiveNumber(text);
  if (!Number.isInteger(value)) throw new InvalidArgumentError('a positive integer');
  return value;
}

/** Exit code of a run cancelled by Ctrl-C (128 + SIGINT), as shells report it. */
const INTERRUPTED_EXIT = 130;

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new InvalidArgumentError('a TCP port (0-65535)');
  return port;
}

/**
 * `--inspect`: starts the inspector server, prints where to connect, and waits for a receiver,
 * so the whole run is seen.
 */
async function openInspector(port: number): Promise<InspectorServer> {
  const { startInspectorServer } = await import('../inspector-server.js');
  const inspector = await startInspectorServer({ port });
  err(`inspector: open ${inspector.page} (the Stately inspector, fed by this run)`);
  err(`inspector: or connect a WebSocket receiver to ${inspector.url}`);
  err('inspector: the run starts when a receiver connects (Ctrl-C to quit)');
  await inspector.receiverConnected();
  return inspector;
}

function parseAdapter(text: string): AdapterName {
  if (!isAdapterName(text)) throw new InvalidArgumentError(`one of ${ADAPTERS.join(', ')}`);
  return text;
}

/**
 * `agentic run <workflow>`: runs a workflow file or named workflow, printing a line per step
 * on stderr; stdout gets the final output (or, with `--json`, only the run record). Ctrl-C
 * cancels the run, which is persisted `failed` with error `cancelled` (exit 130; stdout gets
 * nothing, or the record with `--json`); a second Ctrl-C quits.
 * Under `AGENTIC_APPROVAL_PROVIDER=http` see run-approvals.ts.
 */
export function registerRun(program: Command, context: CliContext): void {
  withSettings(
    program
      .command('run <workflow>')
      .description('run a workflow (a YAML file, or a name in the workflows directory)')
      .option('-i, --input <json>', 'workflow inputs as a JSON object', parseJsonObject)
      .option('-a, --adapter <name>', 'engine adapter: graph or native', parseAdapter)
      .option('--json', 'print only the run record (JSON) on stdout, no progress')
      .option('--budget-usd <x>', "the run's max_cost_usd (docs/budgets.md)", parsePositiveNumber)
      .option('--budget-tokens <n>', "the run's max_tokens (docs/budgets.md)", parsePositiveInteger)
      .option(
        '--inspect [port]',
        'serve the run to the XState/Stately inspector on 127.0.0.1 (a free port unless given); the run starts once a receiver connects',
        parsePort,
      ),
  ).action(async (workflow: string, options: RunOptions) => {
    const { settings } = await import('../settings.js');
    const config = settings(options, context.env);
    const arg = await readWorkflowArg(workflow);
    const inspector =
      options.inspect === undefined
        ? undefined
        : await openInspector(options.inspect === true ? 0 : options.inspect);
    const [
      { createLlmService },
      { composeCommandRuntime },
      {
        createTerminalApprover,
        humanSteps,
        stepsNeedingApproval,
        unanswerableApprovals,
        unanswerableQuestions,
      },
    ] = await Promise.all([
      import('../../llm/llm-service.js'),
      import('../../service/compose.js'),
      import('../run-approvals.js'),
    ]);
    const llm = config.noLlm ? undefined : createLlmService(config.llm);
    const runtime = await composeCommandRuntime(config, llm, inspector?.inspect);
    const source = arg.kind === 'file' ? arg.text : arg.name;
    // Approvals of the `http` provider are answered here, by the person at the terminal.
    const asking = runtime.approvals.provider === 'http';
    const interactive = process.stdin.isTTY && process.stderr.isTTY;
    let handle: RunHandle | undefined;
    let asksPeople: boolean;
    let interrupted = false;
    const onSignal = (): void => {
      if (interrupted) process.exit(INTERRUPTED_EXIT);
      interrupted = true;
      err('cancelling the run (press Ctrl-C again to quit at once)');
      if (handle !== undefined) runtime.cancel(handle.runId, 'cancelled');
    };
    const stopListening = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    try {
      const { workflow: compiled } = await runtime.validate(source);
      asksPeople = compiled !== undefined && humanSteps(compiled).length > 0;
      if (!interactive && compiled !== undefined) {
        if (asksPeople) throw unanswerableQuestions(humanSteps(compiled));
        const needs = asking ? await stepsNeedingApproval(compiled) : [];
        if (needs.length > 0) throw unanswerableApprovals(needs);
      }
      // Listening before the start: the run file exists once start() is under way, and a signal
      // with no listener would end the process at once and leave that file `running`.
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      handle = await runtime.start({
        workflow: source,
        input: options.input ?? {},
        ...(options.adapter !== undefined ? { adapter: options.adapter } : {}),
        // Nobody could raise a budget here (no HTTP API): a run at its budget fails.
        budget: {
          onExceeded: 'fail',
          ...(options.budgetUsd === undefined ? {} : { maxCostUsd: options.budgetUsd }),
          ...(options.budgetTokens === undefined ? {} : { maxTokens: options.budgetTokens }),
        },
      });
    } catch (error) {
      stopListening();
      await runtime.shutdown({ graceMs: 0 });
      await llm?.close();
      await inspector?.close();
      if (isAppError(error) && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
        throw workflowNotFound(workflow, config.workflowsDir);
      }
      throw error;
    }
    if (interrupted) runtime.cancel(handle.runId, 'cancelled');
    const approver =
      (asking || asksPeople) && interactive
        ? createTerminalApprover({ approvals: runtime.approvals, input: process.stdin, write: err })
        : undefined;
    // The process lives until the run has ended and its file is written: what a run waits on
    // (an approval's timer, an agent's promise) need not hold the event loop, and an empty
    // loop would end the process with the run file still `running` (exit code 13).
    const keepAlive = setInterval(() => undefined, 2 ** 30);
    try {
      for await (const event of handle.events) {
        approver?.onEvent(event);
        if (options.json === true) continue;
        const line = progressLine(event);
        if (line !== undefined) err(line);
      }
      // The run file is written before `done` resolves, so a cancelled run is on disk as failed.
      const record = await handle.done;
      if (options.json === true) out(JSON.stringify(record, null, 2));
      else if (interrupted && record.status !== 'success') {
        // A cancelled run has no result: an empty output on stdout would pass for one.
        err(
          `interrupted: run ${record.run_id} cancelled, no output (--json prints the run record)`,
        );
      } else out(JSON.stringify(record.final_output ?? null, null, 2));
      if (interrupted) process.exitCode = INTERRUPTED_EXIT;
      else if (record.status !== 'success') process.exitCode = 1;
    } finally {
      clearInterval(keepAlive);
      approver?.close();
      stopListening();
      await runtime.shutdown({ graceMs: 0 });
      await llm?.close();
      await inspector?.close();
    }
  });
}
