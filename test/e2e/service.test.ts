import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startService(env: Record<string, string>): { child: ChildProcess; exit: Promise<Exit> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(packageRoot, 'src', 'main.ts')], {
    cwd: packageRoot,
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

/** Resolves with the listening URL from the JSON start-up log line. */
function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString();
      for (const line of buffer.split('\n')) {
        if (!line.includes('agentic-runtime listening')) continue;
        child.stdout?.off('data', onData);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`service exited with ${String(code)}`)));
  });
}

describe('service process (src/main.ts)', function () {
  this.timeout(30_000);
  let root: string;
  let env: Record<string, string>;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-e2e-'));
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    env = {
      AGENTIC_PORT: '0',
      AGENTIC_RUNS_DIR: join(root, 'runs'),
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_NO_LLM: '1',
      LOG_FORMAT: 'json',
      AGENTIC_SHUTDOWN_GRACE_SECONDS: '5',
    };
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('serves, logs JSON with request ids, and exits 0 on SIGTERM after running runs finish', async () => {
    const { child, exit } = startService(env);
    const url = await listening(child);
    const health = await fetch(`${url}/api/health`);
    expect(health.status).to.equal(200);
    const run = await fetch(`${url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'test_deterministic', run_id: 'e2e-1', adapter: 'native' }),
    });
    expect(run.status).to.equal(200);
    const listed = await fetch(`${url}/api/runs`);
    expect(listed.status).to.equal(200);
    child.kill('SIGTERM');
    const result = await exit;
    expect(result.code).to.equal(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines.find((l) => l.msg === 'request' && l.path === '/api/run');
    expect(request).to.include({ method: 'POST', status: 200 });
    expect(request?.req_id).to.be.a('string');
    expect(lines.some((l) => l.msg === 'agentic-runtime stopped')).to.equal(true);
    const files = await readdir(join(root, 'runs'));
    const file = files.find((f) => f.endsWith('_e2e-1.json'));
    const record = JSON.parse(await readFile(join(root, 'runs', file as string), 'utf8')) as {
      status: string;
    };
    expect(record.status).to.equal('success');
  });

  it('prints a configuration error without a stack and exits 1', async () => {
    const { exit } = startService({
      ...env,
      AGENTIC_PORT: 'eighty',
      AGENTIC_DEFAULT_ADAPTER: 'turbo',
    });
    const result = await exit;
    expect(result.code).to.equal(1);
    expect(result.stderr).to.include('AGENTIC_PORT');
    expect(result.stderr).to.include('AGENTIC_DEFAULT_ADAPTER');
    expect(result.stderr).not.to.match(/\n\s+at /);
  });
});
