import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import {
  PathEscapeError,
  resolveFileToolPath,
  resolveFileToolPathSync,
} from '../security/index.js';
import { resolveExecutable } from './executables.js';
import { ToolError } from './tool-error.js';
import { TOOL_RISKS, type ToolDefinition } from './types.js';

export interface ShellToolOptions {
  /** AGENTIC_SHELL_ALLOWED_COMMANDS: names or absolute paths; empty blocks every command. */
  allowedCommands: readonly string[];
  /** AGENTIC_FILE_BASE_DIR: working directories must be inside it; commands run there. */
  baseDir: string | undefined;
  /** The child's whole environment (already stripped of keys and tokens). */
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is dropped and flagged. */
  maxOutputBytes: number;
}

/**
 * `shell`: runs one allowed executable with an argv array, never through a shell, so `;`, `|`,
 * `$(...)` and globs reach the program as literal text (spec, Safety controls 4 and 5).
 */
export function createShellTool(options: ShellToolOptions): ToolDefinition {
  let allowed: Promise<Set<string>> | undefined;
  const allowedPaths = (): Promise<Set<string>> =>
    (allowed ??= Promise.all(
      options.allowedCommands.map((command) => resolveExecutable(command, options.env.PATH ?? '')),
    ).then((paths) => new Set(paths.filter((path): path is string => path !== undefined))));
  /** The real path of `argv[0]`; refused unless allowed (and for a NUL byte anywhere). */
  const allowedExecutable = async (argv: string[]): Promise<string> => {
    const command = argv[0] as string;
    if (argv.some((arg) => arg.includes('\0')))
      throw new ToolError('shell', 'NUL byte in argv', 'argv');
    const executable = await resolveExecutable(command, options.env.PATH ?? '');
    if (executable === undefined || !(await allowedPaths()).has(executable)) {
      throw new ToolError(
        'shell',
        `command '${command}' is not allowed (AGENTIC_SHELL_ALLOWED_COMMANDS)`,
        'allowlist',
      );
    }
    return executable;
  };
  return {
    name: 'shell',
    description:
      'Runs an allowed executable without a shell: {argv: [command, ...args], cwd?} → {exit_code, signal, stdout, stderr, truncated}.',
    risk: TOOL_RISKS.HIGH,
    parameters: {
      type: 'object',
      properties: {
        argv: {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: { type: 'string', maxLength: 100_000 },
        },
        cwd: { type: 'string', minLength: 1, maxLength: 4096 },
      },
      required: ['argv'],
      additionalProperties: false,
    },
    check: async (args) => {
      await allowedExecutable(args.argv as string[]);
      const cwd = typeof args.cwd === 'string' ? args.cwd : '.';
      try {
        resolveFileToolPathSync(options.baseDir, cwd);
      } catch (error) {
        // A cwd missing is the call's own to report (a step before it may create it).
        if (!(error instanceof PathEscapeError)) return;
        throw new ToolError('shell', `cwd refused (${error.reason})`, 'cwd', error);
      }
    },
    run: async (args, { signal }) => {
      const argv = args.argv as string[];
      const executable = await allowedExecutable(argv);
      const cwd = await workingDirectory(
        options.baseDir,
        typeof args.cwd === 'string' ? args.cwd : '.',
      );
      return run(executable, argv.slice(1), cwd, options, signal);
    },
  };
}

async function workingDirectory(baseDir: string | undefined, cwd: string): Promise<string> {
  try {
    const dir = await resolveFileToolPath(baseDir, cwd);
    if (!(await stat(dir)).isDirectory())
      throw new ToolError('shell', `cwd ${cwd} is not a directory`, 'cwd');
    return dir;
  } catch (error) {
    if (error instanceof ToolError) throw error;
    const reason = error instanceof PathEscapeError ? error.reason : 'does not exist';
    throw new ToolError('shell', `cwd refused (${reason})`, 'cwd', error);
  }
}

function run(
  executable: string,
  args: string[],
  cwd: string,
  options: ShellToolOptions,
  signal: AbortSignal,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, {
      cwd,
      env: { ...options.env },
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs,
      killSignal: 'SIGKILL',
      signal,
    });
    const out = collector(options.maxOutputBytes);
    const err = collector(options.maxOutputBytes);
    child.stdout.on('data', out.add);
    child.stderr.on('data', err.add);
    child.once('error', (error) => {
      reject(
        new ToolError(
          'shell',
          signal.aborted
            ? 'aborted'
            : `cannot run ${executable} (${(error as NodeJS.ErrnoException).code ?? error.name})`,
          'spawn',
          error,
        ),
      );
    });
    child.once('close', (code, killed) => {
      if (signal.aborted) return;
      if (code === null && killed === 'SIGKILL') {
        reject(new ToolError('shell', `timed out after ${options.timeoutMs} ms`, 'timeout'));
        return;
      }
      resolve({
        exit_code: code,
        signal: killed,
        stdout: out.text(),
        stderr: err.text(),
        truncated: out.truncated() || err.truncated(),
      });
    });
  });
}

function collector(max: number): {
  add: (chunk: Buffer) => void;
  text: () => string;
  truncated: () => boolean;
} {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = false;
  return {
    add: (chunk) => {
      const room = max - kept;
      if (chunk.length > room) dropped = true;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
    truncated: () => dropped,
  };
}
