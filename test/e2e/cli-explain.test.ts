/**
 * `agentic explain <run>` (the real CLI process) against a running service: plain words by
 * default, the endpoint's JSON with `--json`, one line and exit 1 for an unknown run. The causes
 * themselves are covered one by one in test/http/explain.test.ts.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/index.js';
import type { WorkflowEvent } from '../../src/engine/types.js';
import { call, startTestService, type TestService } from '../http/harness.js';

const TSX = pathToFileURL(createRequire(join(packageRoot, 'package.json')).resolve('tsx')).href;
const CLI = ['--import', TSX, join(packageRoot, 'src', 'cli.ts')];

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function agentic(args: string[], cwd: string): Promise<Exit> {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const CHAIN = `name: explain_chain
inputs:
  mode: { type: string, default: quick }
steps:
  - name: first
    agent: tier0_sleep
    inputs: { ms: 600000 }
  - name: second
    agent: tier0_echo
    depends_on: [first]
  - name: never
    agent: tier0_echo
    when: "\${inputs.mode} == 'deep'"
`;

describe('agentic explain (real process)', function () {
  this.timeout(120_000);
  let service: TestService | undefined;
  let off: (() => void) | undefined;

  afterEach(async () => {
    off?.();
    await service?.dispose();
    service = undefined;
  });

  it('prints why a run is not moving, as words and as JSON, and refuses an unknown run', async () => {
    service = await startTestService();
    const svc = service;
    await writeFile(join(svc.workflowsDir, 'explain_chain.yaml'), CHAIN);
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => (started = resolve));
    off = svc.runtime.subscribe((event: WorkflowEvent) => {
      if (event.type === 'step_start' && event.step === 'first') started();
    });
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'explain_chain' });
    expect(res.status, res.text).to.equal(200);
    const runId = (res.body as { run_id: string }).run_id;
    await firstStarted;

    const words = await agentic(['explain', runId, '--url', svc.url], svc.root);
    expect(words.stderr).to.equal('');
    expect(words.code).to.equal(0);
    const lines = words.stdout.trimEnd().split('\n');
    expect(lines[0]).to.equal(
      `Run ${runId} (explain_chain) is running: 1 of 3 steps finished; first is running; second waits for its dependencies.`,
    );
    expect(lines[1]).to.match(
      /^ {2}first {3}attempt 1 of 1 has been running for .+ \(agent tier0_sleep\)$/,
    );
    expect(lines.slice(2)).to.deep.equal([
      '  second  waits for first (running) to finish',
      `  never   skipped: its when: \${inputs.mode} == 'deep' was false (it saw inputs.mode = "quick")`,
    ]);

    const json = await agentic(['explain', runId, '--json', '--url', svc.url], svc.root);
    expect(json.code).to.equal(0);
    const answer = JSON.parse(json.stdout) as { run_id: string; steps: { step: string }[] };
    expect(answer).to.include({ run_id: runId, reason: 'running', source: 'engine' });
    expect(answer.steps.map((step) => step.step)).to.deep.equal(['first', 'second', 'never']);

    const unknown = await agentic(['explain', 'no-such-run', '--url', svc.url], svc.root);
    expect(unknown.code).to.equal(1);
    expect(unknown.stdout).to.equal('');
    expect(unknown.stderr).to.equal(`no run no-such-run at ${svc.url}\n`);

    const cancelled = await call(svc.url, 'POST', `/api/runs/${runId}/cancel`);
    expect(cancelled.status).to.equal(200);
    await svc.finished(runId);
    const ended = await agentic(['explain', runId, '--url', svc.url], svc.root);
    expect(ended.code).to.equal(0);
    const [head, ...rest] = ended.stdout.trimEnd().split('\n');
    expect(head).to.match(
      new RegExp(
        `^Run ${runId} \\(explain_chain\\) has ended: it failed at step first: cancelled \\(.+\\)\\. Nothing waits\\.$`,
      ),
    );
    expect(rest).to.deep.equal([
      '  first   failed: cancelled',
      '  second  skipped: dependency failed: first',
      `  never   skipped: its when: \${inputs.mode} == 'deep' was false (the run file shows inputs.mode = "quick")`,
    ]);
  });
});
