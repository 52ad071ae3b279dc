import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';
import { freePort } from '../redis/redis-server.js';

describe('service start-up with REDIS_URL (src/main.ts)', function () {
  this.timeout(30_000);
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-redis-startup-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('exits 1 with the configuration error naming the unreachable Redis, without its password', async () => {
    const port = await freePort();
    const tsx = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;
    const child = spawn(process.execPath, ['--import', tsx, join(packageRoot, 'src', 'main.ts')], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        AGENTIC_HOST: '127.0.0.1',
        AGENTIC_PORT: '0',
        AGENTIC_RUNS_DIR: join(root, 'runs'),
        AGENTIC_WORKFLOWS_DIR: join(packageRoot, 'workflows'),
        REDIS_URL: `redis://user:s3cret@127.0.0.1:${port}/0`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).to.equal(1);
    expect(stderr).to.not.match(/\n\s+at /);
    expect(stderr).to.not.include('s3cret');
    expect(stdout).to.not.include('listening');
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).to.have.length(2);
    expect(lines[0]).to.equal('Invalid configuration:');
    expect(lines[1]).to.match(
      new RegExp(
        `^  - REDIS_URL=redis://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}/0: Redis is unreachable \\(.*ECONNREFUSED.*\\)\\. Start Redis or unset REDIS_URL`,
      ),
    );
  });
});
