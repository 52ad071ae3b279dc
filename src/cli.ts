#!/usr/bin/env node
/**
 * The `agentic` command line. Each command is one file under `src/cli/commands/`, registered
 * in `src/cli/commands/index.ts`. Results go to stdout, progress and problems to stderr; exit
 * codes: 0 ok, 1 failure or invalid input (one message, no stack), 2 usage error, 130 a run
 * cancelled with Ctrl-C.
 *
 * Start-up stays small: registering a command loads only commander and the command's options;
 * its action imports what it uses when it runs (`--version` and `list` never load the engine,
 * the LLM providers, evaluation or the service; issue 25).
 */
import { Command } from 'commander';
import { COMMANDS } from './cli/commands/index.js';
import { report } from './cli/io.js';
import { packageVersion } from './config/package-info.js';

// A reader that went away (`agentic list | head -1`) is the end of the output, not an error: exit
// quietly, as Unix tools do when their pipe closes, instead of a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

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
