import type { Command } from 'commander';
import { registerApprovals } from './approvals.js';
import { registerEval } from './eval.js';
import { registerExplain } from './explain.js';
import { registerChat } from './chat.js';
import { registerList } from './list.js';
import { registerModels } from './models.js';
import { registerRerun } from './rerun.js';
import { registerRun } from './run.js';
import { registerServe } from './serve.js';
import { registerValidate } from './validate.js';
import { registerWorker } from './worker.js';

/** What commands get from the entry point (the only place that reads the process's environment). */
export interface CliContext {
  env: Readonly<Record<string, string | undefined>>;
}

/** Adds one command (with its options and action) to the program. */
export type RegisterCommand = (program: Command, context: CliContext) => void;

/** Every `agentic` command, in help order: a new command is a file plus one entry here. */
export const COMMANDS: readonly RegisterCommand[] = [
  registerServe,
  registerWorker,
  registerRun,
  registerRerun,
  registerValidate,
  registerList,
  registerEval,
  registerChat,
  registerModels,
  registerApprovals,
  registerExplain,
];
