import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

const RUNS = 200;
/** A descriptor limit far below the number of runs ending together at shutdown. */
const FD_LIMIT = 96;

describe('service process: SIGTERM with many runs ending together', function () {
  this.timeout(60_000);
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-e2e-drain-'));
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await writeFile(
      join(root, 'workflows', 'slow_drain.yaml'),
      'name: slow_drain\nsteps:\n  - { name: wait, agent: tier0_sleep, inputs: { ms: 4000 } }\n',
    );
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it(`writes all ${RUNS} end records under a ${FD_LIMIT}-descriptor limit and exits 0`, async () => {
    // The build `npm start` runs (`npm test` builds it first), started with the usual limit;
    // the descriptor limit is lowered once it listens (prlimit): under `ulimit -n 96` from the
    // start, the module loader itself (and the tsx loader's esbuild service) could run out.
    const main = join(packageRoot, 'dist', 'src', 'main.js');
    const child = spawn(process.execPath, [main], {
      cwd: packageRoot,
      env: {
        PATH: process.env.PATH ?? '',
        AGENTIC_PORT: '0',
        AGENTIC_RUNS_DIR: join(root, 'runs'),
        AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
        AGENTIC_NO_LLM: '1',
        AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
        AGENTIC_MAX_ACTIVE_RUNS: String(RUNS),
        AGENTIC_SHUTDOWN_GRACE_SECONDS: '30',
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (): void => {
        const line = stdout.split('\n').find((l) => l.includes('agentic-runtime listening'));
        if (line === undefined) return;
        child.stdout.off('data', onData);
        resolve((JSON.parse(line) as { url: string }).url);
      };
      child.stdout.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`service exited with ${String(code)}: ${stdout.slice(-2000)}`)),
      );
    });
    execFileSync('prlimit', ['--pid', String(child.pid), `--nofile=${FD_LIMIT}:${FD_LIMIT}`]);
    const limits = await readFile(`/proc/${String(child.pid)}/limits`, 'utf8');
    expect(limits).to.match(new RegExp(`Max open files\\s+${FD_LIMIT}\\s+${FD_LIMIT}`));
    // A few connections at a time: the client's sockets count against the server's limit too.
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < RUNS) {
          const id = `drain-${next++}`;
          const response = await fetch(`${url}/api/run`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ workflow: 'slow_drain', run_id: id, adapter: 'native' }),
          });
          expect(response.status, await response.text()).to.equal(200);
        }
      }),
    );
    child.kill('SIGTERM');
    expect(await exited, stdout.slice(-2000)).to.equal(0);
    expect(stdout).not.to.include('EMFILE');
    const files = (await readdir(join(root, 'runs'))).filter((name) => name.endsWith('.json'));
    expect(files).to.have.length(RUNS);
    const statuses = await Promise.all(
      files.map(
        async (name) =>
          (JSON.parse(await readFile(join(root, 'runs', name), 'utf8')) as { status: string })
            .status,
      ),
    );
    expect(new Set(statuses)).to.deep.equal(new Set(['success']));
  });
});
