#!/usr/bin/env node
/**
 * The `agentic` command line: `serve`, `run <workflow>`, `validate <file>`, `list`.
 * Output goes to stdout (results) and stderr (problems); exit codes: 0 ok, 1 failure or
 * invalid input, 2 usage error.
 */
import { Command, InvalidArgumentError } from 'commander';
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { loadConfig, packageVersion, type Config } from './config/index.js';
import { createRuntime } from './engine/runtime.js';
import { ADAPTERS, type AdapterName } from './engine/types.js';
import { ConfigError, errorMessage, isAppError } from './errors.js';
import { runService } from './http/service.js';
import { createLogger } from './log.js';
import { compileWorkflow, createWorkflowRegistry, parseWorkflowYaml } from './workflow/index.js';

const out = (text: string): void => void process.stdout.write(`${text}\n`);
const err = (text: string): void => void process.stderr.write(`${text}\n`);

function config(): Config {
  return loadConfig(process.env);
}

function report(error: unknown): void {
  if (isAppError(error) && error.details !== undefined && error.details.length > 0) {
    for (const detail of error.details) err(`${detail.loc.join('.')}: ${detail.msg}`);
  } else {
    err(errorMessage(error));
  }
  process.exitCode = 1;
}

function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('expected a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError('expected a JSON object');
  }
  return value as Record<string, unknown>;
}

function parseAdapter(text: string): AdapterName {
  if (!(ADAPTERS as readonly string[]).includes(text)) {
    throw new InvalidArgumentError(`one of ${ADAPTERS.join(', ')}`);
  }
  return text as AdapterName;
}

const program = new Command()
  .name('agentic')
  .description('agentic-runtime: run multi-step LLM agent workflows')
  .version(packageVersion)
  .showHelpAfterError();

program
  .command('serve')
  .description('start the HTTP service (configured by AGENTIC_* variables)')
  .option('-p, --port <port>', 'listening port (overrides AGENTIC_PORT)')
  .option('-H, --host <host>', 'listening address (overrides AGENTIC_HOST)')
  .action(async (options: { port?: string; host?: string }) => {
    const env = { ...process.env };
    if (options.port !== undefined) env.AGENTIC_PORT = options.port;
    if (options.host !== undefined) env.AGENTIC_HOST = options.host;
    await runService(env);
  });

program
  .command('run <workflow>')
  .description(
    'run a workflow (name or YAML path in the workflows directory) and print its run record',
  )
  .option('-i, --input <json>', 'workflow inputs as a JSON object', parseJsonObject)
  .option('-a, --adapter <name>', 'engine adapter: graph or native', parseAdapter)
  .action(
    async (
      workflow: string,
      options: { input?: Record<string, unknown>; adapter?: AdapterName },
    ) => {
      try {
        const cfg = config();
        const runtime = createRuntime({
          workflowsDir: cfg.workflowsDir,
          runsDir: cfg.runsDir,
          noLlm: cfg.noLlm,
          maxConcurrency: cfg.maxConcurrency,
          defaultAdapter: cfg.defaultAdapter as AdapterName,
          logger: createLogger({
            format: cfg.logFormat,
            level: 'warn',
            destination: process.stderr,
          }),
        });
        const record = await runtime.run({
          workflow,
          input: options.input ?? {},
          ...(options.adapter !== undefined ? { adapter: options.adapter } : {}),
        });
        await runtime.shutdown({ graceMs: 0 });
        out(JSON.stringify(record, null, 2));
        if (record.status !== 'success') process.exitCode = 1;
      } catch (error) {
        report(error);
      }
    },
  );

program
  .command('validate <file>')
  .description('validate a workflow YAML file (schema, dependencies, cycles, expressions)')
  .action(async (file: string) => {
    try {
      const text = await readFile(file, 'utf8');
      const document = parseWorkflowYaml(text);
      const workflow = compileWorkflow(document, { expectedName: basename(file, extname(file)) });
      out(`valid: ${workflow.name} (${workflow.steps.length} steps)`);
    } catch (error) {
      report(error);
    }
  });

program
  .command('list')
  .description('list the workflows of the workflows directory')
  .action(async () => {
    try {
      const registry = createWorkflowRegistry({ dir: config().workflowsDir });
      for (const name of await registry.list()) out(name);
    } catch (error) {
      report(error);
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError) {
    err(error.message);
    process.exitCode = 1;
  } else {
    throw error;
  }
}
