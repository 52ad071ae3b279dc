#!/usr/bin/env node
/**
 * The `agentic` command line. Each command is one file under `src/cli/commands/`, registered
 * in `src/cli/commands/index.ts`. Results go to stdout, progress and problems to stderr; exit
 * codes: 0 ok, 1 failure or invalid input (one message, no stack), 2 usage error, 130 a run
 * cancelled with Ctrl-C.
 */
import { Command } from 'commander';
import { COMMANDS } from './cli/commands/index.js';
import { report } from './cli/io.js';
import { packageVersion } from './config/index.js';

const program = new Command()
  .name('agentic')
  .description('agentic-runtime: run multi-step LLM agent workflows')
  .version(packageVersion)
  .showHelpAfterError();
for (const register of COMMANDS) register(program, { env: process.env });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Every command's failure ends here: a message for a person, never a stack.
  report(error);
}
