import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(
  env: Record<string, string>,
  cwd: string,
): { child: ChildProcess; exit: Promise<Exit> } {
  // Resolved here: the child runs in a directory without node_modules.
  const tsx = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;
  const child = spawn(process.execPath, ['--import', tsx, join(packageRoot, 'src', 'main.ts')], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<Exit>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, exit };
}

/** The failure a user sees: exit 1 and exactly one line on stderr, no stack frames. */
function expectOneLine(exit: Exit): string {
  expect(exit.code, exit.stderr).to.equal(1);
  const lines = exit.stderr.trim().split('\n');
  expect(lines, exit.stderr).to.have.length(1);
  expect(exit.stderr).to.not.match(/\n\s+at /);
  return lines[0] ?? '';
}

describe('service start-up failures (src/main.ts)', function () {
  this.timeout(30_000);
  let root: string;
  let env: Record<string, string>;
  let blocker: Server | undefined;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-startup-'));
    env = {
      AGENTIC_HOST: '127.0.0.1',
      AGENTIC_PORT: '0',
      AGENTIC_RUNS_DIR: join(root, 'runs'),
      AGENTIC_WORKFLOWS_DIR: join(packageRoot, 'workflows'),
      LOG_FORMAT: 'json',
    };
  });
  afterEach(async () => {
    if (blocker !== undefined) await new Promise((resolve) => blocker?.close(resolve));
    blocker = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('says the runs directory is a file in one line', async () => {
    await writeFile(join(root, 'runs'), 'not a directory');
    const line = expectOneLine(await start(env, root).exit);
    expect(line).to.equal(
      `AGENTIC_RUNS_DIR=${join(root, 'runs')} is not a directory (a file is in the way); remove it or set AGENTIC_RUNS_DIR`,
    );
  });

  it('says the port is in use and how to pick another', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker?.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const line = expectOneLine(await start({ ...env, AGENTIC_PORT: String(port) }, root).exit);
    expect(line).to.equal(
      `cannot listen on 127.0.0.1:${port}: the port is in use; pick another with AGENTIC_PORT or --port`,
    );
  });

  it('says an address that cannot be bound is not this machine’s', async () => {
    // 192.0.2.0/24 is TEST-NET-1: never assigned to a local interface.
    const line = expectOneLine(await start({ ...env, AGENTIC_HOST: '192.0.2.1' }, root).exit);
    expect(line).to.match(/^cannot listen on 192\.0\.2\.1:0: .*AGENTIC_HOST or --host/);
  });

  it('lists the allowed values of a bad LOG_LEVEL and of a bad boolean', async () => {
    const exit = await start({ ...env, LOG_LEVEL: 'loud', AGENTIC_NO_LLM: 'maybe' }, root).exit;
    expect(exit.code).to.equal(1);
    expect(exit.stderr).to.not.match(/\n\s+at /);
    expect(exit.stderr).to.include(
      'LOG_LEVEL="loud": must be equal to one of the allowed values (trace, debug, info, warn, error, fatal, silent)',
    );
    expect(exit.stderr).to.include(
      'AGENTIC_NO_LLM="maybe": expected one of 1, true, yes, on, 0, false, no, off',
    );
  });

  it('names the OpenTelemetry samplers for an unknown OTEL_TRACES_SAMPLER, without a stack', async () => {
    const exit = await start({ ...env, OTEL_TRACES_SAMPLER: 'sometimes' }, root).exit;
    expect(exit.code).to.equal(1);
    expect(exit.stderr).to.not.match(/\n\s+at /);
    expect(exit.stderr).to.include(
      'OTEL_TRACES_SAMPLER="sometimes": must be equal to one of the allowed values (always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio)',
    );
  });

  it('accepts the boolean spellings docs/configuration.md lists and warns about a missing workflows dir', async () => {
    const service = start(
      {
        ...env,
        AGENTIC_NO_LLM: 'Yes',
        AGENTIC_TRUST_PROXY: 'off',
        AGENTIC_WORKFLOWS_DIR: join(root, 'nowhere'),
      },
      root,
    );
    const warning = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      service.child.stdout?.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        if (buffer.includes('agentic-runtime listening')) resolve(buffer);
      });
      service.child.once('exit', (code) => reject(new Error(`exited with ${String(code)}`)));
    });
    const records = warning
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; workflowsDir?: string });
    const missing = records.find((record) =>
      record.msg.startsWith('workflows directory not found'),
    );
    expect(missing?.level).to.equal(40);
    expect(missing?.workflowsDir).to.equal(join(root, 'nowhere'));
    // The signal may land before the service installs its handlers: only the exit is awaited.
    service.child.kill('SIGTERM');
    await service.exit;
  });
});
