import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';
import { startTestService, type TestService } from '../http/harness.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Resolved here: the child runs in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;
const CLI = ['--import', TSX, join(packageRoot, 'src', 'cli.ts')];

interface Spawned {
  child: ChildProcess;
  exit: Promise<Exit>;
  /** Resolves once stdout + stderr hold `text` (after `from` characters). */
  shows(text: string, from?: number): Promise<number>;
  output(): string;
}

function watch(child: ChildProcess): Spawned {
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const changed = (): void => waiters.forEach((wake) => wake());
  child.stdout?.on('data', (chunk: Buffer) => ((stdout += chunk.toString()), changed()));
  child.stderr?.on('data', (chunk: Buffer) => ((stderr += chunk.toString()), changed()));
  const exit = new Promise<Exit>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    child,
    exit,
    output: () => stdout + stderr,
    shows: (text, from = 0) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const at = (stdout + stderr).indexOf(text, from);
          if (at === -1) return;
          waiters.delete(check);
          resolve(at + text.length);
        };
        waiters.add(check);
        check();
        void exit.then(() => {
          if (waiters.delete(check))
            reject(new Error(`exited before '${text}':\n${stdout}${stderr}`));
        });
      }),
  };
}

/** The real CLI with pipes (not a terminal). */
function agentic(args: string[], cwd: string, env: Record<string, string>): Spawned {
  return watch(
    spawn(process.execPath, [...CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;
const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

/**
 * The real CLI on a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are a
 * terminal, what is written to the child's stdin is typed at it (Ctrl-C included).
 */
function agenticOnTerminal(args: string[], cwd: string, env: Record<string, string>): Spawned {
  const command = [process.execPath, ...CLI, ...args].map(quote).join(' ');
  return watch(
    spawn('script', ['-qefc', command, '/dev/null'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', SHELL: '/bin/sh', TERM: 'dumb', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
}

const WRITE = `name: approve_write
steps:
  - name: save
    agent: tier0_tool
    tools: [file_write]
    inputs: { tool: file_write, args: { path: note.txt, content: hello } }
`;

describe('agentic run under AGENTIC_APPROVAL_PROVIDER=http (real process)', function () {
  this.timeout(180_000);
  let root: string;
  let base: string;
  let runs: string;
  let env: Record<string, string>;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-cli-approval-'));
    base = join(root, 'base');
    runs = join(root, 'runs');
    await mkdir(base);
    await writeFile(join(root, 'approve_write.yaml'), WRITE);
    env = { AGENTIC_APPROVAL_PROVIDER: 'http', AGENTIC_FILE_BASE_DIR: base };
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function records(): Promise<Record<string, unknown>[]> {
    const files = (await readdir(runs).catch(() => [] as string[])).filter((f) =>
      f.endsWith('.json'),
    );
    return Promise.all(
      files.map(
        async (file) =>
          JSON.parse(await readFile(join(runs, file), 'utf8')) as Record<string, unknown>,
      ),
    );
  }

  it('without a terminal, refuses a workflow that may need an approval before it starts', async () => {
    const exit = await agentic(['run', 'approve_write.yaml', '-r', runs], root, env).exit;
    expect(exit.code, exit.stderr).to.equal(1);
    expect(exit.stderr).to.equal(
      "not started: step 'save' may call file_write, which needs an approval, and AGENTIC_APPROVAL_PROVIDER=http; nobody could answer it here (agentic run serves no HTTP API, and stdin is not a terminal to ask on). Run it from a terminal to be asked, start it on the service (agentic serve, then answer with agentic approvals), or set AGENTIC_APPROVAL_PROVIDER to policy, auto or deny\n",
    );
    expect(await records()).to.deep.equal([]);
    // A workflow without high-risk tools runs as ever.
    const plain = await agentic(['run', 'test_deterministic', '-r', runs], root, env).exit;
    expect(plain.code, plain.stderr).to.equal(0);
  });

  it('keeps the process alive while a step waits on nothing that holds the event loop; Ctrl-C ends the run failed', async () => {
    await writeFile(
      join(root, 'agents.mjs'),
      // An unref'd timer fires only in a process that something else keeps alive.
      "export default { hang: () => { setTimeout(() => process.stderr.write('agent: still waiting\\n'), 300).unref(); return new Promise(() => {}); } };\n",
    );
    await writeFile(join(root, 'hang.yaml'), 'name: hang\nsteps:\n  - { name: h, agent: hang }\n');
    const run = agentic(['run', 'hang.yaml', '-r', runs], root, {
      AGENTIC_AGENTS_MODULE: './agents.mjs',
    });
    // Before, the process ended by itself first (exit 13), its run file `running`.
    await run.shows('agent: still waiting');
    run.child.kill('SIGINT');
    const exit = await run.exit;
    expect(exit.code, exit.stderr).to.equal(130);
    const [record] = await records();
    expect(record).to.include({ status: 'failed', error: 'cancelled' });
  });

  describe('on a terminal', function () {
    before(function () {
      if (!HAS_SCRIPT) this.skip();
    });

    it('asks at the terminal with the call id and deadline; y approves and the tool runs', async () => {
      const run = agenticOnTerminal(['run', 'approve_write.yaml', '-r', runs], root, env);
      const at = await run.shows('approve? [y/N]');
      const asked = run.output().slice(0, at);
      expect(asked).to.match(/\? save: file_write needs your approval \(call [0-9a-f-]{36}\)/);
      expect(asked).to.include('arguments: {"path":"note.txt","content":"hello"}');
      expect(asked).to.match(
        /denied at \d{4}-\d\d-\d\dT\S+Z without an answer \(AGENTIC_APPROVAL_TIMEOUT_SECONDS\)/,
      );
      run.child.stdin?.write('y\n');
      const exit = await run.exit;
      expect(exit.code, exit.stdout).to.equal(0);
      expect(exit.stdout).to.include('    approved');
      expect(await readFile(join(base, 'note.txt'), 'utf8')).to.equal('hello');
      const [record] = await records();
      expect(record).to.include({ status: 'success' });
    });

    it('n denies: the step fails with the reason, exit 1, the run file failed', async () => {
      const run = agenticOnTerminal(['run', 'approve_write.yaml', '-r', runs], root, env);
      await run.shows('approve? [y/N]');
      run.child.stdin?.write('n\n');
      const exit = await run.exit;
      expect(exit.code, exit.stdout).to.equal(1);
      expect(exit.stdout).to.include('FAILED save');
      expect(exit.stdout).to.include('tool file_write: denied: denied at the terminal');
      const [record] = await records();
      expect(record).to.include({ status: 'failed' });
    });

    it('unanswered, the call is denied at the approval timeout: a clear line, exit 1, the run file failed', async () => {
      const run = agenticOnTerminal(['run', 'approve_write.yaml', '-r', runs], root, {
        ...env,
        AGENTIC_APPROVAL_TIMEOUT_SECONDS: '1',
      });
      const exit = await run.exit;
      expect(exit.code, exit.stdout).to.equal(1);
      expect(exit.stdout).to.include(
        'file_write denied without your answer: no decision within 1s (timed out)',
      );
      const [record] = await records();
      expect(record).to.include({ status: 'failed' });
    });

    it('Ctrl-C at the question cancels the run: exit 130, the run file failed cancelled', async () => {
      const run = agenticOnTerminal(['run', 'approve_write.yaml', '-r', runs], root, env);
      await run.shows('approve? [y/N]');
      run.child.stdin?.write('\x03');
      const exit = await run.exit;
      expect(exit.code, exit.stdout).to.equal(130);
      const [record] = await records();
      expect(record).to.include({ status: 'failed', error: 'cancelled' });
    });
  });
});

describe('agentic approvals (real process, real service on port 0)', function () {
  this.timeout(180_000);
  const KEY = 'approvals-cli-key-0123456789';
  let service: TestService;
  let base: string;
  before(async () => {
    base = await mkdtemp(join(tmpdir(), 'agentic-approvals-cli-'));
    service = await startTestService({
      env: { AGENTIC_APPROVAL_PROVIDER: 'http', AGENTIC_FILE_BASE_DIR: base, AGENTIC_API_KEY: KEY },
    });
    await writeFile(join(service.workflowsDir, 'approve_write.yaml'), WRITE);
  });
  after(async () => {
    await service.dispose();
    await rm(base, { recursive: true, force: true });
  });

  /** Starts a run and resolves with its run id and the call id once its call waits. */
  async function waitingCall(): Promise<{ runId: string; callId: string }> {
    const asked = new Map<string, string>();
    let wake = (): void => undefined;
    const off = service.runtime.subscribe((event) => {
      if (event.type !== 'approval_required') return;
      asked.set(event.run_id, event.call_id);
      wake();
    });
    try {
      const response = await fetch(`${service.url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ workflow: 'approve_write' }),
      });
      expect(response.status).to.equal(200);
      const runId = ((await response.json()) as { run_id: string }).run_id;
      const callId = await new Promise<string>((resolve) => {
        wake = () => {
          const id = asked.get(runId);
          if (id !== undefined) resolve(id);
        };
        wake();
      });
      return { runId, callId };
    } finally {
      off();
    }
  }

  it('lists the waiting calls, approves one (the run ends success), denies another', async () => {
    const first = await waitingCall();
    const second = await waitingCall();
    const withKey = { AGENTIC_API_KEY: KEY };
    const listed = await agentic(['approvals', 'list', '--url', service.url], base, withKey).exit;
    expect(listed.code, listed.stderr).to.equal(0);
    const rows = listed.stdout.trim().split('\n');
    expect(rows[0]).to.match(/^CALL\s+RUN\s+WORKFLOW\s+STEP\s+TOOL\s+EXPIRES$/);
    expect(rows.slice(1).map((row) => row.split(/\s+/).slice(0, 5))).to.deep.equal([
      [first.callId, first.runId, 'approve_write', 'save', 'file_write'],
      [second.callId, second.runId, 'approve_write', 'save', 'file_write'],
    ]);
    const json = await agentic(['approvals', 'list', '--json', '--url', service.url], base, withKey)
      .exit;
    expect((JSON.parse(json.stdout) as { approvals: unknown[] }).approvals).to.have.length(2);

    const approved = await agentic(
      ['approvals', 'approve', first.callId, '--reason', 'checked', '--url', service.url],
      base,
      withKey,
    ).exit;
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout).to.equal(`approved ${first.callId}\n`);
    expect(await service.finished(first.runId)).to.include({ status: 'success' });

    const denied = await agentic(
      ['approvals', 'deny', second.callId, '--url', service.url],
      base,
      withKey,
    ).exit;
    expect(denied.code, denied.stderr).to.equal(0);
    expect(denied.stdout).to.equal(`denied ${second.callId}\n`);
    const record = await service.finished(second.runId);
    expect(record).to.include({ status: 'failed' });

    const again = await agentic(
      ['approvals', 'deny', second.callId, '--url', service.url],
      base,
      withKey,
    ).exit;
    expect(again.code).to.equal(1);
    expect(again.stderr).to.equal(`tool call ${second.callId} has already been decided\n`);
  });

  it('says clearly when the id is unknown, the key is missing or wrong, or the service is unreachable', async () => {
    const unknown = await agentic(
      ['approvals', 'approve', 'no-such-call', '--url', service.url],
      base,
      { AGENTIC_API_KEY: KEY },
    ).exit;
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.equal(
      `no tool call waits for approval with id no-such-call at ${service.url} (agentic approvals list shows the waiting ones)\n`,
    );
    const keyless = await agentic(['approvals', 'list', '--url', service.url], base, {}).exit;
    expect(keyless.code).to.equal(1);
    expect(keyless.stderr).to.equal(
      `the service at ${service.url} needs an API key: set AGENTIC_API_KEY\n`,
    );
    const wrong = await agentic(['approvals', 'list', '--url', service.url], base, {
      AGENTIC_API_KEY: 'not-the-key-0123456789',
    }).exit;
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.equal(
      `the service at ${service.url} refused the API key (AGENTIC_API_KEY)\n`,
    );
    const closed = await closedPort();
    const unreachable = await agentic(
      ['approvals', 'list', '--url', `http://127.0.0.1:${closed}`],
      base,
      { AGENTIC_API_KEY: KEY },
    ).exit;
    expect(unreachable.code).to.equal(1);
    expect(unreachable.stderr).to.equal(
      `cannot reach the service at http://127.0.0.1:${closed} (ECONNREFUSED): is agentic serve running there? (--url)\n`,
    );
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
