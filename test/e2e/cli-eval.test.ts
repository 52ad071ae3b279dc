import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';

// Resolved here: the child runs in a directory without node_modules.
const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;

function agentic(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', TSX, join(packageRoot, 'src', 'cli.ts'), ...args],
    {
      cwd,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('agentic eval (batch evaluation from the terminal)', function () {
  this.timeout(30_000);
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-cli-eval-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('runs the first N samples with progress on stderr and prints the per-sample table and aggregate', async () => {
    const runs = join(root, 'runs');
    const exit = await agentic(
      [
        'eval',
        'test_deterministic',
        '--dataset',
        'repository/question_answering',
        '--limit',
        '2',
        '--no-llm',
        '-r',
        runs,
      ],
      root,
    );
    expect(exit.code, exit.stderr).to.equal(0);
    const progress = exit.stderr.trim().split('\n');
    expect(progress).to.have.length(2);
    expect(progress[1]).to.match(/^\[#{24}\] 2\/2 qa-00[12] success \d+\.\d\d [A-F]$/);
    const lines = exit.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^sample\s+id\s+status\s+score\s+grade\s+passed\s+run$/);
    expect(lines[1]).to.match(
      /^0\s+qa-001\s+success\s+\d+\.\d\d\s+[A-F]\s+(yes|no)\s+test_deterministic-/,
    );
    expect(lines[2]).to.match(/^1\s+qa-002\s+success/);
    expect(lines.at(-2)).to.equal(
      'workflow test_deterministic · dataset repository/question_answering · rubric default',
    );
    expect(lines.at(-1)).to.match(
      /^mean score \d+\.\d\d · pass rate \d+\.\d% · grades A \d, B \d, C \d, D \d, F \d · failures 0 · scored 2\/2$/,
    );
    // Each sample is a run file with its evaluation.
    const files = (await readdir(runs)).filter((name) => name.endsWith('.json'));
    expect(files).to.have.length(2);
    for (const file of files) {
      const record = JSON.parse(await readFile(join(runs, file), 'utf8')) as {
        extra: { evaluation: { status: string; rubric_id: string; grade: string } };
      };
      expect(record.extra.evaluation).to.include({ status: 'complete', rubric_id: 'default' });
    }
  });

  it('--json prints the batch; an unknown dataset is one clear line and exit 1', async () => {
    const json = await agentic(
      [
        'eval',
        'test_deterministic',
        '-d',
        'repository/bug_fixing',
        '-s',
        '1',
        '--no-llm',
        '--json',
        '-r',
        join(root, 'runs'),
      ],
      root,
    );
    expect(json.code, json.stderr).to.equal(0);
    const batch = JSON.parse(json.stdout) as {
      status: string;
      items: { sample_id: string }[];
      aggregate: { scored: number };
    };
    expect(batch.status).to.equal('complete');
    expect(batch.items.map((i) => i.sample_id)).to.deep.equal(['bf-002']);
    expect(json.stderr).to.equal('');
    const missing = await agentic(
      ['eval', 'test_deterministic', '-d', 'local/nope', '--no-llm', '-r', join(root, 'runs')],
      root,
    );
    expect(missing.code).to.equal(1);
    expect(missing.stderr.trim()).to.equal('dataset not found: local/nope');
  });
});
