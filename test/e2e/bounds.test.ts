import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, watch } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

/**
 * Issue 8.1/8.5 against the real process with a 256 MB heap: before the byte bounds, the
 * 100-step run below aborted it with "JavaScript heap out of memory" (in JSON.stringify of the
 * run record), the alias bomb was saved, and deep nesting blocked the event loop for seconds.
 */
interface BigRecord {
  status: string;
  steps: { input: Record<string, unknown> }[];
  extra: { warnings: string[] };
}

/**
 * The first finished run record in `dir`, awaited through file-system events (the event streams
 * are no help here: 200 events of ~1 MB each make a slow client, which the service cuts off).
 */
async function finishedRecord(
  dir: string,
  signal: AbortSignal,
): Promise<{ text: string; record: BigRecord }> {
  const watcher = watch(dir, { signal });
  const check = async () => {
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.json')) continue;
      // Run files are replaced atomically: a read sees a whole record.
      const text = await readFile(join(dir, name), 'utf8');
      const record = JSON.parse(text) as BigRecord;
      if (record.status !== 'running') return { text, record };
    }
    return undefined;
  };
  try {
    const done = await check();
    if (done !== undefined) return done;
    for await (const change of watcher) {
      if (!change.filename?.endsWith('.json')) continue;
      const finished = await check();
      if (finished !== undefined) return finished;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  throw new Error('no finished run record');
}

describe('service process under hostile content (256 MB heap)', function () {
  this.timeout(60_000);
  let root: string;
  let child: ChildProcess;
  let exited: Promise<{ code: number | null; signal: string | null; stderr: string }>;
  let url: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-bounds-'));
    await mkdir(join(root, 'workflows'));
    child = spawn(
      process.execPath,
      ['--max-old-space-size=256', '--import', 'tsx', join(packageRoot, 'src', 'main.ts')],
      {
        cwd: packageRoot,
        env: {
          PATH: process.env.PATH ?? '',
          AGENTIC_PORT: '0',
          AGENTIC_RUNS_DIR: join(root, 'runs'),
          AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
          AGENTIC_NO_LLM: '1',
          LOG_FORMAT: 'json',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
    );
    url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const match = /"url":"([^"]+)"/.exec(buffer);
        if (match !== null) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`service exited with ${String(code)}`)));
    });
  });

  afterEach(async () => {
    child.kill('SIGTERM');
    const exit = await exited;
    await rm(root, { recursive: true, force: true });
    expect(exit.signal, exit.stderr.slice(-2000)).to.equal(null);
  });

  const send = (method: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('refuses an alias bomb with 422 and deep nesting with 422, and keeps serving', async () => {
    let bomb = `name: bomb\nsteps:\n  - name: a\n    agent: tier0_echo\n    inputs:\n      big: &A "${'x'.repeat(900_000)}"\n`;
    for (let i = 0; i < 99; i++) bomb += `      k${i}: *A\n`;
    const saved = await send('PUT', '/api/workflows/bomb', { yaml_text: bomb });
    expect(saved.status).to.equal(422);
    expect(((await saved.json()) as { detail: unknown[] }).detail).to.deep.equal([
      {
        loc: ['yaml_text'],
        msg: 'invalid YAML: more than 4194304 bytes once its aliases are expanded (AGENTIC_MAX_EXPANDED_YAML_BYTES)',
        type: 'value_error.yaml',
      },
    ]);
    const deep = await send('POST', '/api/workflows/validate', {
      yaml_text: '['.repeat(300_000) + ']'.repeat(300_000),
    });
    expect(deep.status).to.equal(422);
    expect(JSON.stringify(await deep.json())).to.contain('nested more than 100 levels deep');
    expect((await fetch(`${url}/api/health`)).status).to.equal(200);
  });

  it('runs 100 steps that each interpolate a 9 KB input 100 times: the record is bounded, truncations are listed', async () => {
    const steps = Array.from(
      { length: 100 },
      (_, i) =>
        `  - name: s${i}\n    agent: tier0_echo\n    inputs:\n      x: "${'${inputs.t}'.repeat(100)}"\n`,
    ).join('');
    const yaml = `name: big\ninputs:\n  t: { type: string }\nsteps:\n${steps}`;
    expect((await send('PUT', '/api/workflows/big', { yaml_text: yaml })).status).to.equal(200);
    const started = await send('POST', '/api/run', {
      workflow: 'big',
      run_id: 'big-1',
      input_data: { t: 'y'.repeat(9000) },
    });
    expect(started.status).to.equal(200);
    // Before the bounds the process died here (SIGABRT, heap out of memory): fail, do not hang.
    const abort = new AbortController();
    const outcome = await Promise.race([
      finishedRecord(join(root, 'runs'), abort.signal),
      exited,
    ]).finally(() => abort.abort());
    if (!('record' in outcome)) {
      throw new Error(
        `service exited (${outcome.signal ?? outcome.code}): ${outcome.stderr.slice(-500)}`,
      );
    }
    const { text, record } = outcome;
    expect(text.length).to.be.below(17 * 1024 * 1024);
    expect(record.status).to.equal('success');
    expect(record.extra.warnings.length).to.be.above(0);
    // The run's byte budget (AGENTIC_MAX_RUN_BYTES, the record bound by default) cuts the later
    // steps' inputs as they run, so the record fits without further truncation.
    expect(record.extra.warnings[0]).to.match(
      /^steps\.s\d+\.(input|output) entries x truncated: the run's step inputs and outputs exceeded 16777216 bytes \(AGENTIC_MAX_RUN_BYTES\)$/,
    );
    expect(
      record.steps.some(
        (step) => (step.input.x as Record<string, unknown> | undefined)?.__truncated__ === true,
      ),
    ).to.equal(true);
    expect((await fetch(`${url}/api/health`)).status).to.equal(200);
  });
});
