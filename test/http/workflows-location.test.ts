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

describe('custom agents in the service (AGENTIC_AGENTS_MODULE)', () => {
  let root: string;
  let running: RunningServer | undefined;
  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'agentic-agents-')));
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('lists, validates and runs the module’s agents', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      join(root, 'my-agents.mjs'),
      'export default { shout: async ({ input }) => ({ output: { text: String(input.text).toUpperCase() }, modelUsed: null, tokensUsed: null }) };\n',
    );
    await mkdir(join(root, 'workflows'));
    const config = loadConfig(
      { AGENTIC_PORT: '0', AGENTIC_AGENTS_MODULE: './my-agents.mjs', AGENTIC_NO_LLM: '1' },
      root,
    );
    running = await startServer({ config, logger: createSilentLogger() });
    const agents = await call(running.url, 'GET', '/api/agents');
    expect((agents.body as { agents: { name: string; tier: string }[] }).agents).to.deep.include({
      name: 'shout',
      description: 'Custom agent registered by the application.',
      tier: '0',
      role: 'shout',
    });
    const yaml = 'name: loud\nsteps:\n  - { name: say, agent: shout, inputs: { text: hi } }\n';
    const valid = await call(running.url, 'POST', '/api/workflows/validate', { yaml_text: yaml });
    expect(valid.status).to.equal(200);
    const saved = await call(running.url, 'PUT', '/api/workflows/loud', { yaml_text: yaml });
    expect(saved.status).to.equal(200);
    const unknown = yaml.replace('agent: shout', 'agent: whisper');
    const bad = await call(running.url, 'POST', '/api/workflows/validate', { yaml_text: unknown });
    expect(bad.status).to.equal(422);
    const run = await (await running.runtime.start({ workflow: 'loud' })).done;
    expect(run.steps[0]?.output).to.deep.equal({ text: 'HI' });
  });
});
