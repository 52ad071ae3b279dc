/**
 * The service process as `npm start` runs it (dist/, built by `npm test` first), for tests of
 * process faults: its JSON log lines, its listening URL, its exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

export const MAIN = join(packageRoot, 'dist', 'src', 'main.js');

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  /** Its JSON log records. */
  logs(): Record<string, unknown>[];
  /** Resolves on the `agentic-runtime listening` record with its URL. */
  listening: Promise<string>;
  exit: Promise<number | null>;
}

/** Starts the service with `env` (and PATH); `command` replaces `node dist/src/main.js`. */
export function spawnService(
  env: Record<string, string>,
  command: { file: string; args: string[] } = { file: process.execPath, args: [MAIN] },
): ServiceProcess {
  const child = spawn(command.file, command.args, {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const changed = new Set<() => void>();
  const add = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const listener of [...changed]) listener();
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const logs = (): Record<string, unknown>[] =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const listening = new Promise<string>((resolve, reject) => {
    const check = (): void => {
      const record = logs().find((l) => l.msg === 'agentic-runtime listening');
      if (record === undefined) return;
      changed.delete(check);
      resolve(record.url as string);
    };
    changed.add(check);
    child.once('exit', (code) =>
      reject(new Error(`service exited with ${String(code)}: ${output.slice(-2000)}`)),
    );
  });
  listening.catch(() => undefined);
  return { child, output: () => output, logs, listening, exit };
}

/**
 * Waits for a condition only the file system or the log shows: checked every 20 ms, failing
 * after `ms`.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A temp directory with the shipped workflows and `sleepy` (one `tier0_sleep` step of `sleepMs`),
 * and the service environment that runs on it (port 0, no LLM, its runs directory).
 */
export async function sleepyServiceRoot(
  prefix: string,
  sleepMs: number,
): Promise<{ root: string; env: Record<string, string> }> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
  await writeFile(
    join(root, 'workflows', 'sleepy.yaml'),
    `name: sleepy\nsteps:\n  - { name: wait, agent: tier0_sleep, inputs: { ms: ${sleepMs} } }\n`,
  );
  const env = {
    AGENTIC_PORT: '0',
    AGENTIC_RUNS_DIR: join(root, 'runs'),
    AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
    AGENTIC_NO_LLM: '1',
  };
  return { root, env };
}
