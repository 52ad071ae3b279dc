import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { journalFileName } from '../../src/store/run-journal.js';
import { startedRunRecord } from '../../src/store/run-record.js';
import { compileWorkflow } from '../../src/workflow/compile.js';

/**
 * Issue 23.1 against the real process (dist/) with a 256 MB heap: the fault campaign's template
 * amplification (100 steps each echoing `${inputs.t}` 100 times, then a long sleep) posted every
 * half second killed the process (heap exhausted flattening ropes into journal lines, exit 134)
 * and left 180 MB journals whose folding aborted every later start-up.
 */
interface Service {
  child: ChildProcess;
  url: string;
  logs: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: string | null; stderr: string }>;
}

function startService(root: string, env: Record<string, string> = {}): Promise<Service> {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=256', join(packageRoot, 'dist', 'src', 'main.js')],
    {
      cwd: packageRoot,
      env: {
        PATH: process.env.PATH ?? '',
        AGENTIC_PORT: '0',
        AGENTIC_RUNS_DIR: join(root, 'runs'),
        AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
        AGENTIC_NO_LLM: '1',
        AGENTIC_SHUTDOWN_GRACE_SECONDS: '2',
        LOG_FORMAT: 'json',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  const logs: Record<string, unknown>[] = [];
  let buffer = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (typeof entry.url === 'string') resolve({ child, url: entry.url, logs, exited });
        } catch {
          // not a log line
        }
      }
    });
    void exited.then(({ code, signal, stderr: err }) =>
      reject(new Error(`service exited (${signal ?? code}): ${err.slice(-1000)}`)),
    );
  });
}

/**
 * Resolves once a log line with `msg` has been seen (the service logs JSON lines); rejects if the
 * service exits first (before this fix, start-up died of heap exhaustion folding the journals).
 */
async function logged(service: Service, msg: string): Promise<Record<string, unknown>> {
  const died = service.exited.then(({ code, signal, stderr }) => {
    throw new Error(`service exited (${signal ?? code}): ${stderr.slice(-500)}`);
  });
  for (;;) {
    const found = service.logs.find((entry) => entry.msg === msg);
    if (found !== undefined) return found;
    await Promise.race([once(service.child.stdout!, 'data'), died]);
  }
}

describe('service process under template amplification (256 MB heap, issue 23.1)', function () {
  this.timeout(180_000);
  let root: string;
  let service: Service | undefined;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-budget-'));
    await mkdir(join(root, 'workflows'));
  });

  afterEach(async () => {
    const running = service;
    service = undefined;
    running?.child.kill('SIGTERM');
    const exit = await running?.exited;
    // Removed first: a failed check must not leave hundreds of MB behind.
    await rm(root, { recursive: true, force: true });
    if (exit !== undefined) expect(exit.signal, exit.stderr.slice(-2000)).to.equal(null);
  });

  it("lives through the campaign's input: runs beyond the budget get 503 with Retry-After, journals stay within the record bound", async () => {
    const svc = (service = await startService(root));
    const steps = Array.from(
      { length: 100 },
      (_, i) =>
        `  - name: s${i}\n    agent: tier0_echo\n    inputs:\n      x: "${'${inputs.t}'.repeat(100)}"\n`,
    ).join('');
    const yaml = `name: amp\ninputs:\n  t: { type: string }\nsteps:\n${steps}  - name: wait\n    agent: tier0_sleep\n    depends_on: [s99]\n    inputs: { ms: 600000 }\n`;
    const put = await fetch(`${svc.url}/api/workflows/amp`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ yaml_text: yaml }),
    });
    expect(put.status).to.equal(200);
    const answers: { status: number; retryAfter: string | null; detail: string }[] = [];
    // The campaign's pace: one run every half second; it died after the 39th (before this
    // fix, at the first with a 256 MB heap).
    for (let i = 0; i < 45; i++) {
      const response = await fetch(`${svc.url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'amp', input_data: { t: 'y'.repeat(9000) } }),
      });
      const body = (await response.json()) as { detail?: string };
      answers.push({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        detail: body.detail ?? '',
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(accepted.length).to.be.above(0);
    expect(refused.length).to.be.above(0);
    for (const answer of refused) {
      expect(answer.status).to.equal(503);
      expect(answer.retryAfter).to.equal('5');
      expect(answer.detail).to.match(/AGENTIC_MAX_RUNS_HELD_BYTES/);
    }
    expect((await fetch(`${svc.url}/api/health`)).status).to.equal(200);
    for (const name of await readdir(join(root, 'runs'))) {
      if (name.endsWith('.journal')) {
        expect((await stat(join(root, 'runs', name))).size).to.be.at.most(16 * 1024 * 1024);
      }
    }
    console.log(
      `      accepted ${accepted.length}, refused ${refused.length} (503) of ${answers.length}`,
    );
  });

  it('starts over three 180 MB journals of gone owners: quarantined with one log line each, runs marked interrupted', async () => {
    const runs = join(root, 'runs');
    await mkdir(runs);
    const workflow = compileWorkflow({
      name: 'amp',
      steps: [
        { name: 's0', agent: 'tier0_echo' },
        { name: 's1', agent: 'tier0_echo', depends_on: ['s0'] },
      ],
    });
    // One step line of 1.8 MB (900 KB in, 900 KB out), 100 times: 180 MB, as the campaign left.
    const line = `${JSON.stringify({
      i: 0,
      step: {
        step_name: 's0',
        status: 'success',
        input: { x: 'y'.repeat(900_000) },
        output: { x: 'y'.repeat(900_000) },
      },
    })}\n`;
    const names: string[] = [];
    for (let n = 0; n < 3; n++) {
      const record = startedRunRecord({
        runId: `amp-${n}`,
        workflow,
        adapter: 'graph',
        inputs: {},
        startTime: Date.UTC(2026, 0, 1, 0, 0, n),
        extra: {},
      });
      record.owner = `gone-0123abc${n}-0`;
      const name = `2026010${n}T000000000Z_amp_amp-${n}.json`;
      names.push(name);
      await writeFile(join(runs, name), JSON.stringify(record));
      const out = createWriteStream(join(runs, journalFileName(name)));
      for (let i = 0; i < 100; i++) {
        if (!out.write(line)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'finish');
    }
    const started = Date.now();
    const svc = (service = await startService(root));
    const scanned = await logged(
      svc,
      'runs directory scanned; runs of gone processes marked interrupted',
    );
    console.log(`      listening and scanned in ${Date.now() - started} ms`);
    expect(scanned).to.include({ journalsQuarantined: 3, recovered: 3 });
    const quarantined = svc.logs.filter(
      (entry) =>
        entry.msg ===
        "run journal quarantined; the run is marked interrupted without its steps' progress",
    );
    expect(quarantined.map((entry) => entry.file).sort()).to.deep.equal(names);
    const files = await readdir(runs);
    for (const name of names) {
      expect(files).to.include(`${journalFileName(name)}.quarantine`);
      expect(files).not.to.include(journalFileName(name));
      expect((await stat(join(runs, `${journalFileName(name)}.quarantine`))).size).to.equal(
        line.length * 100,
      );
      const record = JSON.parse(await readFile(join(runs, name), 'utf8')) as RunRecord;
      expect(record).to.include({ status: 'failed', error: 'interrupted' });
      expect((record.extra as { warnings: string[] }).warnings[0]).to.match(
        /^run journal set aside as .+\.quarantine \(\d+ bytes, over the 16777216-byte bound \(AGENTIC_MAX_RUN_RECORD_BYTES\)\)/,
      );
    }
    expect((await fetch(`${svc.url}/api/health`)).status).to.equal(200);
    const listed = (await (await fetch(`${svc.url}/api/runs`)).json()) as { status: string }[];
    expect(listed.map((run) => run.status)).to.deep.equal(['failed', 'failed', 'failed']);
  });
});
