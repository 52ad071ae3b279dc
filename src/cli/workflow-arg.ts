/**
 * What `agentic run` and `agentic validate` accept: a path to a YAML file (relative to the
 * working directory) or the name (or relative YAML path) of a workflow in the workflows
 * directory. Missing ones are one clear message, never a raw `ENOENT`.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { CliError } from './io.js';

/** A workflow given on the command line. */
export type WorkflowArg =
  { kind: 'file'; path: string; text: string; stem: string } | { kind: 'name'; name: string };

/** Reads a file argument, or passes a name on to the workflows directory. */
export async function readWorkflowArg(
  arg: string,
  cwd: string = process.cwd(),
): Promise<WorkflowArg> {
  const path = resolve(cwd, arg);
  const info = await stat(path).catch(() => undefined);
  if (info?.isDirectory() === true) {
    throw new CliError(`${arg} is a directory; give a workflow YAML file or a workflow name`);
  }
  if (info?.isFile() === true) {
    try {
      return {
        kind: 'file',
        path,
        text: await readFile(path, 'utf8'),
        stem: basename(path, extname(path)),
      };
    } catch (error) {
      throw new CliError(`cannot read ${arg}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  }
  return { kind: 'name', name: arg };
}

/** The message for a workflow that is neither a file here nor a workflow of the directory. */
export function workflowNotFound(arg: string, workflowsDir: string): CliError {
  return new CliError(
    `workflow '${arg}' not found: no such file, and no workflow of that name in ${workflowsDir} (set --workflows-dir or AGENTIC_WORKFLOWS_DIR)`,
  );
}
