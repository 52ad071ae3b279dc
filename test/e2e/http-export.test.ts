import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

// An application of its own, in a directory where `agentic-runtime` is an installed package
// (a link to this one): it imports `agentic-runtime` and `agentic-runtime/http` by name, through
// the package's exports map and the built dist/ (`npm test` builds it first), as a user's would.
const APP = `
import { createRuntime } from 'agentic-runtime';
import { createLogger, loadConfig, startServer } from 'agentic-runtime/http';

const dir = process.argv[2];
const config = loadConfig({
  AGENTIC_HOST: '127.0.0.1',
  AGENTIC_PORT: '0',
  AGENTIC_WORKFLOWS_DIR: dir + '/workflows',
  AGENTIC_RUNS_DIR: dir + '/runs',
});
const prompts = [];
const runtime = createRuntime({
  workflowsDir: config.workflowsDir,
  runsDir: config.runsDir,
  agents: {
    shout: async ({ input }) => ({
      output: { text: String(input.text).toUpperCase() },
      modelUsed: null,
      tokensUsed: null,
    }),
  },
  llm: {
    async complete(request) {
      prompts.push(request);
      return { text: 'written by the app client', model: 'app:model-1', tokensUsed: { input: 3, output: 4, total: 7 } };
    },
  },
});
const server = await startServer({ config, runtime, logger: createLogger({ level: 'warn', destination: process.stderr }) });
process.stdout.write(server.url + '\\n');
process.on('SIGTERM', () => {
  server.close().then(() => process.stdout.write('closed after ' + prompts.length + ' model call(s)\\n'));
});
`;

const WORKFLOW = `name: greet
inputs:
  name: { type: string }
outputs:
  loud: { from: '\${steps.loud.outputs.text}' }
  letter: { from: '\${steps.letter.outputs.raw_response}' }
steps:
  - { name: loud, agent: shout, inputs: { text: '\${inputs.name}' } }
  - { name: letter, agent: tier1_writer, depends_on: [loud], inputs: { who: '\${steps.loud.outputs.text}' } }
`;

describe('agentic-runtime/http, imported by an application', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-http-export-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("serves a run of the app's own runtime: its custom agent and its LLM client", async () => {
    await mkdir(join(dir, 'node_modules'), { recursive: true });
    await symlink(packageRoot, join(dir, 'node_modules', 'agentic-runtime'), 'dir');
    await mkdir(join(dir, 'workflows'));
    await writeFile(join(dir, 'workflows', 'greet.yaml'), WORKFLOW);
    await writeFile(join(dir, 'app.mjs'), APP);

    const child = spawn(process.execPath, ['app.mjs', dir], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const found = /^(http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`app exited with ${String(code)}: ${stderr}`)));
    });
    try {
      const started = await fetch(`${url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'greet', input_data: { name: 'ada' } }),
      });
      expect(started.status, await started.clone().text()).to.equal(200);
      const { run_id: runId } = (await started.json()) as { run_id: string };
      // The run's event stream (SSE) ends with workflow_end; then the run file is the answer.
      const stream = await fetch(`${url}/api/runs/${runId}/stream`);
      expect(stream.status).to.equal(200);
      expect(await stream.text()).to.include('workflow_end');
      const res = await fetch(`${url}/api/runs/${runId}`);
      expect(res.status).to.equal(200);
      const record = (await res.json()) as { status: string; final_output: unknown };
      expect(record.status).to.equal('success');
      // The service validates with the runtime's own registry: the app's agent is known there.
      const validated = await fetch(`${url}/api/workflows/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ yaml_text: WORKFLOW }),
      });
      expect(validated.status, await validated.clone().text()).to.equal(200);
      expect(record.final_output).to.deep.equal({
        loud: 'ADA',
        letter: 'written by the app client',
      });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exit).to.equal(0);
    expect(stdout).to.include('closed after 1 model call(s)');
    // The run file is where the app's config put it.
    const files = (await readdir(join(dir, 'runs'))).filter((name) => name.endsWith('.json'));
    expect(files).to.have.length(1);
    const file = JSON.parse(await readFile(join(dir, 'runs', files[0]!), 'utf8')) as {
      steps: { model_used: string | null }[];
    };
    expect(file.steps.map((step) => step.model_used)).to.deep.equal([null, 'app:model-1']);
  });
});
