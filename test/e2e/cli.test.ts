import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, watch, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Resolved here: the child runs in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

function agentic(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): { child: ChildProcess; exit: Promise<Exit> } {
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
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<Exit>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, exit };
}

/** Resolves once stderr holds `text`. */
function stderrShows(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString();
      if (buffer.includes(text)) {
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${String(code)}: ${buffer}`)));
  });
}

/** Resolves once `dir` holds a run file (the run has started). */
async function runFileShows(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const stop = new AbortController();
  const changes = watch(dir, { signal: stop.signal });
  const started = async () => (await readdir(dir)).some((name) => name.endsWith('.json'));
  try {
    if (await started()) return;
    for await (const change of changes) {
      if (change.filename?.endsWith('.json') === true && (await started())) return;
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  } finally {
    stop.abort();
  }
}

const SLOW = `name: slow
steps:
  - { name: nap, agent: tier0_sleep, inputs: { ms: 60000 } }
  - { name: after, agent: tier0_echo, depends_on: [nap] }
`;

describe('agentic command line (src/cli.ts)', function () {
  this.timeout(30_000);
  let root: string;
  let runs: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-cli-'));
    runs = join(root, 'runs');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function runFiles(): Promise<Record<string, unknown>[]> {
    // The run files (beside them: `.workflows`, the pinned workflow copies).
    const files = (await readdir(runs)).filter((name) => name.endsWith('.json'));
    return Promise.all(
      files.map(
        async (file) =>
          JSON.parse(await readFile(join(runs, file), 'utf8')) as Record<string, unknown>,
      ),
    );
  }

  it('run shows a line per step start and end, then prints the final output', async () => {
    const exit = await agentic(
      ['run', 'test_deterministic', '--runs-dir', runs, '--input', '{"label":"demo"}'],
      root,
    ).exit;
    expect(exit.code, exit.stderr).to.equal(0);
    const lines = exit.stderr.trim().split('\n');
    expect(lines[0]).to.match(/^run \S+: test_deterministic \(3 steps\)$/);
    expect(lines.slice(1, 7).map((line) => line.replace(/ \d+(\.\d)? m?s$/, ' <t>'))).to.deep.equal(
      [
        '  > process [tier0_process]',
        '  ok process <t>',
        '  > count [tier0_counter]',
        '  ok count <t>',
        '  > report [tier0_echo]',
        '  ok report <t>',
      ],
    );
    expect(lines[7]).to.match(/^success in \d+ m?s \(run file \S+_test_deterministic_\S+\.json\)$/);
    expect(JSON.parse(exit.stdout)).to.deep.include({ length: 23 });
  });

  it('run --json prints only the run record on stdout and no progress', async () => {
    const exit = await agentic(
      ['run', 'test_deterministic', '--json', '-r', runs, '-i', '{"label":"demo"}'],
      root,
    ).exit;
    expect(exit.code).to.equal(0);
    expect(exit.stderr).to.equal('');
    const record = JSON.parse(exit.stdout) as Record<string, unknown>;
    expect(record).to.include({ workflow_name: 'test_deterministic', status: 'success' });
    expect(await runFiles()).to.have.length(1);
  });

  it("run builds its runtime from the service's settings: AGENTIC_STEP_TIMEOUT_SECONDS ends a step", async () => {
    await writeFile(join(root, 'slow.yaml'), SLOW);
    const exit = await agentic(['run', 'slow.yaml', '--json', '-r', runs], root, {
      AGENTIC_STEP_TIMEOUT_SECONDS: '1',
    }).exit;
    // Before, the command's runtime took only some settings and the step slept its 60 s.
    expect(exit.code, exit.stderr).to.equal(1);
    const record = JSON.parse(exit.stdout) as { status: string; steps: { error: string }[] };
    expect(record.status).to.equal('failed');
    expect(record.steps[0]!.error).to.match(/timed out after 1 ?s/);
  });

  it('exits 0 without a stack when its reader goes away (agentic list | head -1)', async () => {
    const { child, exit } = agentic(['list'], root);
    // The pipe's reading end is closed before anything is written: the first line meets EPIPE.
    child.stdout?.destroy();
    const result = await exit;
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
  });

  it('run -i converts form-style strings like the HTTP API and names unknown inputs', async () => {
    const input = '{"threshold":"3","text":"a longer text"}';
    const exit = await agentic(['run', 'conditional_branching', '-r', runs, '-i', input], root)
      .exit;
    expect(exit.code, exit.stderr).to.equal(0);
    expect(JSON.parse(exit.stdout)).to.deep.include({ branch: 'long' });
    const [record] = await runFiles();
    expect(record!.inputs).to.deep.equal({ threshold: 3, text: 'a longer text' });
    const typo = await agentic(
      ['run', 'conditional_branching', '-r', runs, '-i', '{"thresold":3}'],
      root,
    ).exit;
    expect(typo.code).to.equal(1);
    expect(typo.stderr).to.include(
      "input.thresold: unknown input 'thresold'; conditional_branching takes text, threshold",
    );
  });

  it('Ctrl-C cancels the run and persists it failed with error cancelled', async () => {
    await writeFile(join(root, 'slow.yaml'), SLOW);
    const run = agentic(['run', 'slow.yaml', '-r', runs], root);
    await stderrShows(run.child, '> nap [tier0_sleep]');
    run.child.kill('SIGINT');
    const exit = await run.exit;
    expect(exit.code).to.equal(130);
    expect(exit.stderr).to.include('  - after skipped: dependency failed: nap');
    const [record] = await runFiles();
    expect(record).to.include({ workflow_name: 'slow', status: 'failed', error: 'cancelled' });
    // No result was produced: nothing on stdout (not an empty output), the reason on stderr.
    expect(exit.stdout).to.equal('');
    expect(exit.stderr.trimEnd().split('\n').at(-1)).to.equal(
      `interrupted: run ${String(record!.run_id)} cancelled, no output (--json prints the run record)`,
    );
  });

  it('Ctrl-C under --json prints the cancelled run record on stdout, exit 130', async () => {
    await writeFile(join(root, 'slow.yaml'), SLOW);
    const run = agentic(['run', 'slow.yaml', '--json', '-r', runs], root);
    await runFileShows(runs);
    run.child.kill('SIGINT');
    const exit = await run.exit;
    expect(exit.code).to.equal(130);
    const [record] = await runFiles();
    expect(JSON.parse(exit.stdout)).to.deep.equal(record);
    expect(record).to.include({ status: 'failed', error: 'cancelled' });
  });

  it('run and validate accept a file path or a workflow name; a missing one is one clear line', async () => {
    await writeFile(join(root, 'slow.yaml'), SLOW);
    const byPath = await agentic(['validate', 'slow.yaml'], root).exit;
    expect(byPath).to.deep.include({ code: 0, stdout: 'valid: slow (2 steps)\n' });
    const byName = await agentic(['validate', 'code_review'], root).exit;
    expect(byName).to.deep.include({ code: 0, stdout: 'valid: code_review (4 steps)\n' });
    for (const command of ['run', 'validate']) {
      const missing = await agentic([command, 'missing.yaml', '-r', runs], root).exit;
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.equal(
        `workflow 'missing.yaml' not found: no such file, and no workflow of that name in ${join(packageRoot, 'workflows')} (set --workflows-dir or AGENTIC_WORKFLOWS_DIR)\n`,
      );
    }
  });

  it('--workflows-dir and --no-llm: runs an LLM workflow of another directory with placeholders', async () => {
    const dir = join(root, 'mine');
    await cp(join(packageRoot, 'workflows'), dir, { recursive: true });
    await rm(join(dir, 'test_deterministic.yaml'));
    const listed = await agentic(['list', '--workflows-dir', dir], root).exit;
    expect(listed.stdout.split('\n')).to.not.include('test_deterministic');
    const exit = await agentic(
      [
        'run',
        'code_review',
        '--workflows-dir',
        dir,
        '--no-llm',
        '-r',
        runs,
        '--json',
        '-i',
        '{"code":"def f(): pass"}',
      ],
      root,
    ).exit;
    expect(exit.code, exit.stderr).to.equal(0);
    expect(JSON.parse(exit.stdout)).to.include({ status: 'success' });
  });

  it('runs custom agents from AGENTIC_AGENTS_MODULE under any name', async () => {
    await writeFile(
      join(root, 'my-agents.mjs'),
      'export default { shout: async ({ input }) => ({ output: { text: String(input.text).toUpperCase() }, modelUsed: null, tokensUsed: null }) };\n',
    );
    await writeFile(
      join(root, 'loud.yaml'),
      'name: loud\noutputs:\n  text: { from: "${steps.say.outputs.text}" }\nsteps:\n  - { name: say, agent: shout, inputs: { text: hello } }\n',
    );
    const env = { AGENTIC_AGENTS_MODULE: './my-agents.mjs' };
    const exit = await agentic(['run', 'loud.yaml', '-r', runs], root, env).exit;
    expect(exit.code, exit.stderr).to.equal(0);
    expect(JSON.parse(exit.stdout)).to.deep.equal({ text: 'HELLO' });
    const without = await agentic(['validate', 'loud.yaml'], root).exit;
    expect(without.code).to.equal(1);
    expect(without.stderr).to.include('steps.0.agent: ');
  });
});
