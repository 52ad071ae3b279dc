import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';
import {
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';

const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

function agentic(args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--import', TSX, join(packageRoot, 'src', 'cli.ts'), ...args],
    {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('agentic chat and agentic models (real process, fake OpenAI server)', () => {
  let server: FakeServer;
  let cwd: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'agentic-cli-llm-'));
    server = await startFakeServer((req, res) => {
      if (req.method === 'GET' && req.path === '/v1/models')
        return sendJson(res, 200, { data: [{ id: 'gpt-x' }] });
      if (req.method === 'GET') return sendJson(res, 404, {});
      return sendSse(
        res,
        openAiChunks('streamed answer ✓', {
          model: 'gpt-x',
          parts: 4,
          usage: { prompt: 5, completion: 4 },
        }),
      );
    });
    env = {
      OPENAI_BASE_URL: `${server.url}/v1`,
      OPENAI_API_KEY: 'sk-cli-test-0123456789',
      OLLAMA_HOST: server.url,
      AGENTIC_MODEL_TIER_2: 'openai:gpt-x',
    };
  });
  afterEach(async () => {
    await server.close();
    await rm(cwd, { recursive: true, force: true });
  });

  it('chat --tier 2 streams the answer to stdout and names the model and usage on stderr', async () => {
    const result = await agentic(['chat', '--tier', '2', 'say', 'hi'], cwd, env);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.equal('streamed answer ✓\n');
    expect(result.stderr).to.include('→ openai:gpt-x');
    expect(result.stderr).to.include('openai:gpt-x · 5 in, 4 out, 9 tokens');
    expect(server.requests.find((r) => r.method === 'POST')?.body).to.deep.include({
      messages: [{ role: 'user', content: 'say hi' }],
    });
  });

  it('chat with a failing provider exits 1 with the classified message', async () => {
    server.handle((_req, res) => sendJson(res, 401, { error: { message: 'bad key' } }));
    const result = await agentic(['chat', '--model', 'openai:gpt-x', 'hi'], cwd, env);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.include('openai: HTTP 401: bad key');
    expect(result.stderr).to.not.include('sk-cli-test');
  });

  it('run executes an LLM workflow through the router: outputs from the JSON answer, model and tokens in the run file', async () => {
    server.handle((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [] });
      return sendSse(
        res,
        openAiChunks('```json\n{"summary": "fine", "score": 9}\n```', {
          model: 'gpt-x',
          parts: 6,
          usage: { prompt: 50, completion: 12 },
        }),
        { pieceBytes: 4 },
      );
    });
    await mkdir(join(cwd, 'workflows'));
    await writeFile(
      join(cwd, 'workflows', 'judge.yaml'),
      'name: judge\ninputs:\n  code: { type: string }\nsteps:\n  - name: review\n    agent: tier2_reviewer\n    description: Review.\n    inputs: { code: "${inputs.code}" }\n    outputs: { summary: summary, score: score }\noutputs:\n  score: { from: "${steps.review.outputs.score}" }\n',
    );
    const result = await agentic(
      ['run', 'judge', '-i', '{"code":"x = 1"}', '-r', join(cwd, 'runs')],
      cwd,
      env,
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(JSON.parse(result.stdout)).to.deep.equal({ score: 9 });
    const [file] = (await readdir(join(cwd, 'runs'))).filter((f) => f.endsWith('.json'));
    const record = JSON.parse(await readFile(join(cwd, 'runs', file!), 'utf8')) as {
      steps: { model_used: string; tokens_used: unknown }[];
    };
    expect(record.steps[0]).to.deep.include({
      model_used: 'openai:gpt-x',
      tokens_used: { input: 50, output: 12, total: 62 },
    });
    expect(JSON.stringify(record)).to.not.include('sk-cli-test');
  });

  it('chat --model takes a bare model id: resolved by prefix or the probe, else one clear message', async function () {
    // Three and four processes: slow on a loaded machine.
    this.timeout(180_000);
    const bare = await agentic(['chat', '--model', 'gpt-x', 'hi'], cwd, env);
    expect(bare.code, bare.stderr).to.equal(0);
    expect(bare.stderr).to.include('→ openai:gpt-x');
    const unknown = await agentic(['chat', '--model', 'mystery-model', 'hi'], cwd, env);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.equal(
      "model 'mystery-model' names no provider, and no configured provider lists it (configured: openai, ollama); write it as provider:model (e.g. openai:mystery-model)\n",
    );
    const provider = await agentic(['chat', '--model', 'nosuch:model', 'hi'], cwd, env);
    expect(provider.code).to.equal(1);
    expect(provider.stderr).to.include(
      "unknown provider 'nosuch' (the providers are openai, azure, github, anthropic, gemini, ollama; configured: openai, ollama)",
    );
    expect(provider.stderr).to.not.include('OPENAI_API_KEY');
  });

  it("a step's model: pin may be a bare id: resolved when the step runs, a clear step error when nothing serves it", async function () {
    // Three and four processes: slow on a loaded machine.
    this.timeout(180_000);
    server.handle((req, res) => {
      if (req.method === 'GET' && req.path === '/v1/models')
        return sendJson(res, 200, { data: [{ id: 'house-model' }] });
      if (req.method === 'GET') return sendJson(res, 404, {});
      return sendSse(res, openAiChunks('{"summary": "ok"}', { model: 'house-model', parts: 2 }));
    });
    const pinned = (model: string): string =>
      `name: pinned\nsteps:\n  - name: ask\n    agent: tier2_reviewer\n    model: ${model}\n    outputs: { summary: summary }\n`;
    await writeFile(join(cwd, 'house.yaml'), pinned('house-model'));
    await writeFile(join(cwd, 'mystery.yaml'), pinned('mystery-model'));
    await writeFile(join(cwd, 'spaced.yaml'), pinned('"gpt 4"'));
    const runs = join(cwd, 'runs');
    const ok = await agentic(['run', 'house.yaml', '-r', runs, '--json'], cwd, env);
    expect(ok.code, ok.stderr).to.equal(0);
    const record = JSON.parse(ok.stdout) as { steps: { model_used: string }[] };
    expect(record.steps[0]).to.deep.include({ model_used: 'openai:house-model' });
    const failed = await agentic(['run', 'mystery.yaml', '-r', runs], cwd, env);
    expect(failed.code).to.equal(1);
    expect(failed.stderr).to.include('FAILED ask');
    expect(failed.stderr).to.include(
      "model 'mystery-model' names no provider, and no configured provider lists it (configured: openai, ollama)",
    );
    const invalid = await agentic(['validate', 'spaced.yaml'], cwd, env);
    expect(invalid.code).to.equal(1);
    expect(invalid.stderr).to.include(
      "steps.0.model: model 'gpt 4' is not a model id: write provider:model (openai:gpt-4.1-mini) or a model name a configured provider lists (gpt-4o-mini)",
    );
  });

  it('models prints the probe and the tier chains', async function () {
    // Two processes: slow on a loaded machine.
    this.timeout(120_000);
    const result = await agentic(['models'], cwd, env);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include('✓ openai: 1 model');
    expect(result.stdout).to.include('✗ anthropic: ANTHROPIC_API_KEY not set');
    expect(result.stdout).to.include('tier 2: [openai:gpt-x]');
    const json = await agentic(['models', '--json'], cwd, env);
    const probe = JSON.parse(json.stdout) as { tier_defaults: Record<string, string> };
    expect(probe.tier_defaults['2']).to.equal('openai:gpt-x');
    expect(
      server.requests.every((r) => r.method === 'GET'),
      'no tokens spent',
    ).to.equal(true);
  });

  it('models says per tier which models are skipped because the local server does not list them', async function () {
    this.timeout(120_000);
    const result = await agentic(['models'], cwd, { ...env, AGENTIC_MODEL_TIER_5: 'openai:o3' });
    expect(result.code, result.stderr).to.equal(0);
    const lines = result.stdout.split('\n');
    const tier1 = lines.indexOf(
      'tier 1: ollama:qwen2.5:3b → openai:gpt-4.1-nano → gemini:gemini-2.0-flash-lite → anthropic:claude-3-5-haiku-latest → github:openai/gpt-4.1-nano (none usable)',
    );
    expect(tier1, result.stdout).to.be.greaterThan(-1);
    expect(lines[tier1 + 1]).to.equal('  skipped openai:gpt-4.1-nano: not listed by openai');
    expect(lines).to.include('tier 2: [openai:gpt-x]');
    expect(lines).to.include('tier 5: openai:o3 (none usable)');
    expect(lines).to.include('  skipped openai:o3: not listed by openai');
  });
});
