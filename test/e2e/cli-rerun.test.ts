import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';
import { call, startTestService, type TestService } from '../http/harness.js';
import type { RunRecord } from '../../src/engine/types.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';

const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

function agentic(args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--import', TSX, join(packageRoot, 'src', 'cli.ts'), ...args],
    { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
}

const CHAIN = [
  'name: chain',
  'inputs:',
  '  topic: { type: string, required: true }',
  'outputs:',
  "  final: { from: '${steps.c.outputs.note}' }",
  'steps:',
  "  - { name: a, agent: tier2_writer, description: Step a., inputs: { topic: '${inputs.topic}' } }",
  "  - { name: b, agent: tier2_writer, description: Step b., depends_on: [a], inputs: { x: '${steps.a.outputs.note}' } }",
  "  - { name: c, agent: tier2_writer, description: Step c., depends_on: [b], inputs: { x: '${steps.b.outputs.note}', topic: '${inputs.topic}' } }",
].join('\n');

function stepOf(body: unknown): string {
  return /Step ([a-c])\./.exec(JSON.stringify(body))?.[1] ?? '?';
}

describe('agentic rerun (real process, fake OpenAI server)', function () {
  // Each test spawns the CLI (through tsx) two or three times: generous on a loaded machine.
  this.timeout(180_000);
  let server: FakeServer;
  let cwd: string;
  let env: Record<string, string>;
  let cAnswers: boolean;

  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'agentic-cli-rerun-'));
    cAnswers = false;
    server = await startFakeServer((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [] });
      const step = stepOf(req.body);
      if (step === 'c' && !cAnswers) {
        return sendJson(res, 400, { error: { message: 'c is not answered yet' } });
      }
      return sendJson(
        res,
        200,
        openAiAnswer(JSON.stringify({ note: `${step} done` }), {
          model: 'gpt-x',
          usage: { prompt: 7, completion: 3 },
        }),
      );
    });
    env = {
      OPENAI_BASE_URL: `${server.url}/v1`,
      OPENAI_API_KEY: 'sk-cli-test-0123456789',
      OLLAMA_HOST: server.url,
      AGENTIC_MODEL_TIER_2: 'openai:gpt-x',
      AGENTIC_RUNS_DIR: join(cwd, 'runs'),
    };
    await mkdir(join(cwd, 'workflows'));
    await writeFile(join(cwd, 'workflows', 'chain.yaml'), CHAIN);
  });
  afterEach(async () => {
    await server.close();
    await rm(cwd, { recursive: true, force: true });
  });

  it('reruns the failed last step: one model call, earlier steps reused, new inputs taken', async () => {
    const first = await agentic(['run', 'chain', '-i', '{"topic":"owls"}', '--json'], cwd, env);
    expect(first.code, first.stderr).to.equal(1);
    const source = JSON.parse(first.stdout) as RunRecord;
    expect(source.steps.map((s) => s.status)).to.deep.equal(['success', 'success', 'failed']);

    cAnswers = true;
    const before = server.requests.filter((r) => r.method === 'POST').length;
    const result = await agentic(
      ['rerun', source.run_id, '--from', 'c', '--input', 'topic=bats', '--json'],
      cwd,
      env,
    );
    expect(result.code, result.stderr).to.equal(0);
    const posts = server.requests.filter((r) => r.method === 'POST').slice(before);
    expect(posts.map((r) => stepOf(r.body))).to.deep.equal(['c']);
    const fork = JSON.parse(result.stdout) as RunRecord;
    expect(fork.status).to.equal('success');
    expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 'c' });
    expect(fork.inputs).to.deep.equal({ topic: 'bats' });
    expect(fork.steps[2]!.input).to.deep.equal({ x: 'b done', topic: 'bats' });
    expect(fork.steps.map((s) => s.tokens_used)).to.deep.equal([
      null,
      null,
      { input: 7, output: 3, total: 10 },
    ]);

    const plain = await agentic(['rerun', source.run_id, '--from', 'c'], cwd, env);
    expect(plain.code, plain.stderr).to.equal(0);
    expect(JSON.parse(plain.stdout)).to.deep.equal({ final: 'c done' });
    expect(plain.stderr).to.match(/a rerun of .* from c/);
  });

  it('says what is wrong and exits 1: an unknown run, an unknown step', async () => {
    const unknown = await agentic(['rerun', 'no-such-run', '--from', 'c'], cwd, env);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('Run not found');
    expect(unknown.stderr).to.not.match(/\n\s+at /);

    cAnswers = true;
    const run = await agentic(['run', 'chain', '-i', '{"topic":"owls"}', '--json'], cwd, env);
    const source = JSON.parse(run.stdout) as RunRecord;
    const step = await agentic(['rerun', source.run_id, '--from', 'zz'], cwd, env);
    expect(step.code).to.equal(1);
    expect(step.stderr).to.equal(`--from: run ${source.run_id} has no step "zz"\n`);
  });
});

describe('agentic rerun --url (real process, real service on port 0)', function () {
  this.timeout(120_000);
  let service: TestService;
  beforeEach(async () => (service = await startTestService()));
  afterEach(async () => service.dispose());

  it('asks the service for the fork and prints the new run id; a refusal exits 1 with its detail', async () => {
    const started = await call(service.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      input_data: { label: 'smoke' },
    });
    const source = await service.finished((started.body as { run_id: string }).run_id);
    const result = await agentic(
      ['rerun', source.run_id, '--from', 'report', '-i', 'label=ci', '--url', service.url],
      service.root,
      {},
    );
    expect(result.code, result.stderr).to.equal(0);
    const forkId = result.stdout.trim();
    const fork = await service.finished(forkId);
    expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 'report' });
    expect(fork.inputs).to.deep.include({ label: 'ci' });

    const refused = await agentic(
      ['rerun', source.run_id, '--from', 'nope', '--url', service.url],
      service.root,
      {},
    );
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('HTTP 422');
    expect(refused.stderr).to.include(`run ${source.run_id} has no step`);
  });
});
