import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';

// Resolved here: children may run in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

interface Child {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function spawnNode(script: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', TSX, script, ...args], {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, output: () => output, exit };
}

/** Resolves with the listening URL from the JSON start-up log line. */
function listening(service: Child): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = (): void => {
      const line = service
        .output()
        .split('\n')
        .find((l) => l.includes('agentic-runtime listening'));
      if (line === undefined) return;
      service.child.stdout?.off('data', onData);
      resolve((JSON.parse(line) as { url: string }).url);
    };
    service.child.stdout?.on('data', onData);
    service.child.once('exit', (code) =>
      reject(new Error(`service exited with ${String(code)}: ${service.output()}`)),
    );
  });
}

/**
 * Waits for a condition only the file system shows (a journal's group commit, a readiness
 * flip): checked every 20 ms, failing after `ms`.
 */
async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

const CRASHY = `name: crashy
steps:
  - { name: first, agent: tier0_echo, inputs: { text: one } }
  - { name: second, agent: tier0_echo, depends_on: [first], inputs: { text: two } }
  - { name: wait, agent: tier0_sleep, depends_on: [second], inputs: { ms: 60000 } }
  - { name: after, agent: tier0_echo, depends_on: [wait], inputs: { text: three } }
`;

describe('run files across processes (kill -9, a second process on the same runs directory)', function () {
  this.timeout(60_000);
  let root: string;
  let env: Record<string, string>;
  const children: Child[] = [];
  const main = join(packageRoot, 'src', 'main.ts');

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-e2e-crash-'));
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await writeFile(join(root, 'workflows', 'crashy.yaml'), CRASHY);
    env = {
      AGENTIC_PORT: '0',
      AGENTIC_RUNS_DIR: join(root, 'runs'),
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_NO_LLM: '1',
      AGENTIC_SHUTDOWN_GRACE_SECONDS: '0',
      LOG_FORMAT: 'json',
    };
  });
  afterEach(async () => {
    for (const { child, exit } of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    }
    await rm(root, { recursive: true, force: true });
  });

  function service(): Child {
    const started = spawnNode(main, [], env);
    children.push(started);
    return started;
  }

  async function runFile(runId: string): Promise<string> {
    const names = await readdir(join(root, 'runs'));
    const name = names.find((n) => n.endsWith(`_${runId}.json`));
    if (name === undefined) throw new Error(`no run file for ${runId} in ${names.join(', ')}`);
    return join(root, 'runs', name);
  }

  it('keeps the finished steps with their outputs after kill -9, folded in at the next start-up', async () => {
    // Marked interrupted at the next start (with auto it is resumed: test/e2e/resume.test.ts).
    env.AGENTIC_RESUME = 'manual';
    const first = service();
    const url = await listening(first);
    const started = await fetch(`${url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'crashy', run_id: 'crash-1' }),
    });
    expect(started.status).to.equal(200);
    // The start record is durable in the process log when POST answers; the file follows.
    await until('the run file', async () =>
      (await readdir(join(root, 'runs'))).some((n) => n.endsWith('_crash-1.json')),
    );
    const file = await runFile('crash-1');
    const journal = join(root, 'runs', `.${file.split('/').at(-1)!}.journal`);
    // Both echo steps ended and the sleeping step started: all three are in the journal.
    await until('the journal commit', async () => {
      const text = await readFile(journal, 'utf8').catch(() => '');
      return text.includes('"step_name":"second"') && text.includes('{"i":2,"started"');
    });
    first.child.kill('SIGKILL');
    await first.exit;
    expect((await readJson<RunRecord>(file)).status).to.equal('running');

    const second = service();
    const url2 = await listening(second);
    await until('readiness', async () => (await fetch(`${url2}/api/health/ready`)).ok);
    const response = await fetch(`${url2}/api/runs/crash-1`);
    expect(response.status).to.equal(200);
    const record = (await response.json()) as RunRecord;
    expect(record).to.include({ status: 'failed', error: 'interrupted', failed_step_count: 1 });
    expect(record).not.to.have.property('owner');
    expect(record.success_rate).to.equal(50);
    expect(record.steps.map((s) => [s.step_name, s.status, s.output, s.error])).to.deep.equal([
      ['first', 'success', { text: 'one' }, null],
      ['second', 'success', { text: 'two' }, null],
      ['wait', 'failed', null, 'interrupted'],
      ['after', 'skipped', null, null],
    ]);
    expect(record.steps[2]?.start_time).to.be.a('string');
    expect(await readJson<RunRecord>(file)).to.deep.equal(record);
    expect(await readdir(join(root, 'runs'))).not.to.include(journal.split('/').at(-1));
    const scanned = second
      .output()
      .split('\n')
      .filter((l) => l.includes('runs directory scanned'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(scanned).to.have.length(1);
    expect(scanned[0]).to.include({ runs: 1, recovered: 1, journalsFolded: 1, ownersRemoved: 1 });
  });

  it('leaves the runs of a live service alone when `agentic run` starts beside it', async () => {
    const svc = service();
    const url = await listening(svc);
    const started = await fetch(`${url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'crashy', run_id: 'live-1' }),
    });
    expect(started.status).to.equal(200);
    const cli = spawnNode(
      join(packageRoot, 'src', 'cli.ts'),
      ['run', 'test_deterministic', '--json'],
      env,
    );
    children.push(cli);
    expect(await cli.exit, cli.output()).to.equal(0);
    // The service's run is still its own: running, not marked interrupted by the CLI.
    const live = await readJson<RunRecord>(await runFile('live-1'));
    expect(live).to.include({ status: 'running', error: null });
    const cancelled = await fetch(`${url}/api/runs/live-1/cancel`, { method: 'POST' });
    expect(cancelled.status).to.equal(200);
    await until('the end record', async () => {
      return (await readJson<RunRecord>(await runFile('live-1'))).status === 'failed';
    });
    expect(await readJson<RunRecord>(await runFile('live-1'))).to.include({ error: 'cancelled' });
    svc.child.kill('SIGTERM');
    expect(await svc.exit).to.equal(0);
    // A clean shutdown leaves no owner file and no journal behind (only the pinned workflows).
    const left = (await readdir(join(root, 'runs'))).filter((n) => n.startsWith('.'));
    expect(left).to.deep.equal(['.workflows']);
  });
});
