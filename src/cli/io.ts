/**
 * Output of the `agentic` command line: results on stdout, progress and problems on stderr,
 * and the one place that turns an error into a message and an exit code (no stacks).
 */
import { InvalidArgumentError } from 'commander';
import { ConfigError, errorMessage, isAppError } from '../errors.js';

/** Writes a line of results to stdout. */
export function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Writes a line of progress or a problem to stderr. */
export function err(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** A problem the user can fix, said in one message (exit 1, no stack). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Prints an error for a person: each validation problem on its line, else the message. */
export function report(error: unknown): void {
  if (isAppError(error) && !(error instanceof ConfigError) && (error.details?.length ?? 0) > 0) {
    for (const detail of error.details ?? []) err(`${detail.loc.join('.')}: ${detail.msg}`);
  } else {
    err(errorMessage(error));
  }
  process.exitCode = 1;
}

/** `--input`: a JSON object. */
export function parseJsonObject(text: string): Record<string, unknown> {
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
