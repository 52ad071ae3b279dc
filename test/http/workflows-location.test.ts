import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, packageRoot } from '../../src/config/index.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { createSilentLogger } from '../../src/log.js';
import { call } from './harness.js';

const YAML = 'name: mine\nsteps:\n  - { name: a, agent: tier0_echo }\n';

describe('where workflows live (default AGENTIC_WORKFLOWS_DIR)', () => {
  let cwd: string;
  let running: RunningServer | undefined;
  beforeEach(async () => {
    cwd = await realpath(await mkdtemp(join(tmpdir(), 'agentic-cwd-')));
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
    await rm(cwd, { recursive: true, force: true });
  });

  async function serve(): Promise<RunningServer> {
    const config = loadConfig(
      { AGENTIC_PORT: '0', AGENTIC_RUNS_DIR: join(cwd, 'runs'), AGENTIC_NO_LLM: '1' },
      cwd,
    );
    running = await startServer({ config, logger: createSilentLogger() });
    return running;
  }

  it('uses ./workflows of the working directory when it exists, and saves there', async () => {
    await mkdir(join(cwd, 'workflows'));
    const config = loadConfig({}, cwd);
    expect(config.workflowsDir).to.equal(join(cwd, 'workflows'));
    expect(config.workflowsReadOnlyReason).to.equal(undefined);
    const svc = await serve();
    const res = await call(svc.url, 'PUT', '/api/workflows/mine', { yaml_text: YAML });
    expect(res.status).to.equal(200);
    expect(await readdir(join(cwd, 'workflows'))).to.deep.equal(['mine.yaml']);
  });

  it('otherwise serves the shipped workflows read-only: PUT is 503 and writes nothing', async () => {
    const config = loadConfig({}, cwd);
    expect(config.workflowsDir).to.equal(join(packageRoot, 'workflows'));
    const shipped = await readdir(join(packageRoot, 'workflows'));
    const svc = await serve();
    const list = await call(svc.url, 'GET', '/api/workflows');
    expect((list.body as { workflows: string[] }).workflows).to.include('test_deterministic');
    const res = await call(svc.url, 'PUT', '/api/workflows/mine', { yaml_text: YAML });
    expect(res.status).to.equal(503);
    expect((res.body as { detail: string }).detail).to.equal(
      "the workflows directory is the package's shipped, read-only one: set AGENTIC_WORKFLOWS_DIR (or --workflows-dir) to a directory of your own, or create ./workflows in the working directory",
    );
    expect(await readdir(join(packageRoot, 'workflows'))).to.deep.equal(shipped);
  });

  it('still answers 422 for an invalid workflow in the read-only directory', async () => {
    const svc = await serve();
    const res = await call(svc.url, 'PUT', '/api/workflows/mine', { yaml_text: 'steps: [' });
    expect(res.status).to.equal(422);
  });
});
