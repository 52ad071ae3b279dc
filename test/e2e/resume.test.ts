/**
 * Durable runs on the real process (docs/durable-runs.md): runs in flight when the service is
 * killed (SIGKILL) or stopped (SIGTERM, its grace too short for them) are resumed by the next
 * start and end `success`; each step's side effect (a line its agent appends to a log when it
 * finishes) appears exactly once for every step the stopped process had recorded as finished,
 * and at most twice for the step that was running.
 */
import { expect } from 'chai';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { spawnService, until, type ServiceProcess } from './service-process.js';

const STEPS = 6;

/** A chain of STEPS steps; each waits 250 ms then appends `<run> <step>` to the log. */
const EFFECTS = `name: effects
steps:
${Array.from({ length: STEPS }, (_, i) =>
  i === 0
    ? `  - { name: s1, agent: effect, inputs: { ms: 250 } }`
    : `  - { name: s${i + 1}, agent: effect, depends_on: [s${i}], inputs: { ms: 250 } }`,
).join('\n')}
`;

/** The custom agents module: the side effect happens when the step's work is done. */
function agentsModule(log: string): string {
  return `import { appendFileSync } from 'node:fs';
export default {
  effect: ({ runId, step, input, signal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        appendFileSync(${JSON.stringify(log)}, runId + ' ' + step.name + '\\n');
        resolve({ output: { step: step.name }, modelUsed: null, tokensUsed: null });
      }, Number(input.ms));
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('stopped'));
      });
    }),
};
`;
}

describe('service process: runs resumed after kill -9 and SIGTERM', function () {
  this.timeout(180_000);
  let root: string;
  let runs: string;
  let log: string;
  let env: Record<string, string>;
  const services: ServiceProcess[] = [];

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-e2e-resume-'));
    runs = join(root, 'runs');
    log = join(root, 'effects.log');
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await writeFile(join(root, 'workflows', 'effects.yaml'), EFFECTS);
    await writeFile(join(root, 'agents.mjs'), agentsModule(log));
    await writeFile(log, '');
    env = {
      AGENTIC_PORT: '0',
      AGENTIC_RUNS_DIR: runs,
      AGENTIC_WORKFLOWS_DIR: join(root, 'workflows'),
      AGENTIC_AGENTS_MODULE: join(root, 'agents.mjs'),
      AGENTIC_NO_LLM: '1',
      AGENTIC_METRICS: '1',
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      AGENTIC_MAX_ACTIVE_RUNS: '1000',
      LOG_FORMAT: 'json',
    };
  });
  afterEach(async () => {
    for (const { child, exit } of services.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    }
    await rm(root, { recursive: true, force: true });
  });

  function service(extra: Record<string, string> = {}): ServiceProcess {
    const started = spawnService({ ...env, ...extra });
    services.push(started);
    return started;
  }

  async function startRuns(url: string, count: number, prefix: string): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    for (const id of ids) {
      const response = await fetch(`${url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'effects', run_id: id }),
      });
      expect(response.status, await response.text()).to.equal(200);
    }
    return ids;
  }

  async function records(): Promise<Map<string, RunRecord>> {
    const found = new Map<string, RunRecord>();
    for (const name of await readdir(runs)) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const record = JSON.parse(await readFile(join(runs, name), 'utf8')) as RunRecord;
      found.set(record.run_id, record);
    }
    return found;
  }

  /** `<run> <step>` of every step the journals on disk say finished. */
  async function journaled(): Promise<Set<string>> {
    const done = new Set<string>();
    for (const name of await readdir(runs)) {
      const run = /^\..+_([^_]+-\d+)\.json\.journal$/.exec(name)?.[1];
      if (run === undefined) continue;
      for (const line of (await readFile(join(runs, name), 'utf8')).split('\n')) {
        if (!line.endsWith('}')) continue;
        const parsed = JSON.parse(line) as { step?: { step_name: string; status: string } };
        if (parsed.step?.status === 'success') done.add(`${run} ${parsed.step.step_name}`);
      }
    }
    return done;
  }

  /** How many times each `<run> <step>` side effect happened. */
  async function effects(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const line of (await readFile(log, 'utf8')).split('\n')) {
      if (line !== '') counts.set(line, (counts.get(line) ?? 0) + 1);
    }
    return counts;
  }

  /** Every run ended success, each step's side effect once, or twice for one interrupted step. */
  async function expectFinishedOnce(ids: string[], before: Set<string>): Promise<void> {
    const all = await records();
    const counts = await effects();
    for (const id of ids) {
      const record = all.get(id)!;
      expect(record.status, `${id}: ${JSON.stringify(record.steps)}`).to.equal('success');
      expect((record.extra as { resumes?: unknown[] }).resumes, id).to.have.length(1);
      let twice = 0;
      for (let i = 1; i <= STEPS; i++) {
        const key = `${id} s${i}`;
        const count = counts.get(key) ?? 0;
        if (before.has(key)) expect(count, `${key} (finished before the stop)`).to.equal(1);
        expect(count, key).to.be.within(1, 2);
        if (count === 2) twice++;
      }
      expect(twice, `${id}: steps run twice`).to.be.at.most(1);
    }
  }

  async function metric(url: string, name: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    let total = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
        total += Number(line.split(' ').at(-1));
    }
    return total;
  }

  it('kill -9 mid-run: the next start resumes every run; finished steps ran once', async () => {
    const first = service();
    const url = await first.listening;
    const ids = await startRuns(url, 10, 'killed');
    // Every run has journaled two finished steps (and is in the middle of its chain).
    await until('two journaled steps per run', async () => {
      const done = await journaled();
      return ids.every((id) => done.has(`${id} s2`));
    });
    first.child.kill('SIGKILL');
    await first.exit;
    const before = await journaled();
    // The runs the kill cut (on a loaded machine the first may have ended already).
    const all = await records();
    const cut = ids.filter((id) => all.get(id)?.status === 'running');
    expect(cut.length).to.be.above(0);
    expect(ids.filter((id) => all.get(id)?.status !== 'running')).to.satisfy((ended: string[]) =>
      ended.every((id) => all.get(id)?.status === 'success'),
    );

    const second = service();
    const url2 = await second.listening;
    await until(
      'every run resumed and ended',
      async () => {
        const all = await records();
        return ids.every(
          (id) => all.get(id)?.status === 'success' || all.get(id)?.status === 'failed',
        );
      },
      120_000,
    );
    await expectFinishedOnce(cut, before);
    const scanned = second
      .logs()
      .find((l) => l.msg === 'runs directory scanned; runs of gone processes resumed');
    expect(scanned, second.output().slice(-3000)).to.include({ resumed: cut.length, recovered: 0 });
    expect(await metric(url2, 'agentic_runs_resumed_total')).to.equal(cut.length);
    // At most one step per run was cut by the kill: made again.
    expect(await metric(url2, 'agentic_steps_reexecuted_total')).to.be.within(1, cut.length);
    for (const record of [...(await records()).values()].filter((r) => cut.includes(r.run_id))) {
      const resume = (record.extra as { resumes: Record<string, unknown>[] }).resumes[0]!;
      expect(resume).to.include({ reason: 'restart' });
      expect(resume.from_process).to.be.a('string');
    }
  });

  it('SIGTERM with runs in flight (a deploy): left to the next start, which finishes them all', async () => {
    const first = service({ AGENTIC_SHUTDOWN_GRACE_SECONDS: '0.3' });
    const url = await first.listening;
    const ids = await startRuns(url, 100, 'deployed');
    await until('every run under way', async () => {
      const counts = await effects();
      return ids.every((id) => counts.has(`${id} s1`));
    });
    first.child.kill('SIGTERM');
    expect(await first.exit, first.output().slice(-2000)).to.equal(0);
    const said = first
      .logs()
      .find(
        (l) => l.msg === 'shutdown grace passed: runs left to the next start, which resumes them',
      );
    expect(said, first.output().slice(-3000)).to.not.equal(undefined);
    const before = await journaled();
    const left = [...(await records()).values()].filter((r) => r.status === 'running');
    expect(left.length).to.equal(said!.left);
    expect(left.length).to.be.above(0);
    // None ended failed or cancelled because of the deploy.
    expect([...(await records()).values()].filter((r) => r.status === 'failed')).to.deep.equal([]);

    const second = service();
    await second.listening;
    await until(
      'every run ended',
      async () => {
        const all = await records();
        return ids.every(
          (id) => all.get(id)?.status === 'success' || all.get(id)?.status === 'failed',
        );
      },
      120_000,
    );
    const leftIds = new Set(left.map((r) => r.run_id));
    await expectFinishedOnce(
      ids.filter((id) => leftIds.has(id)),
      before,
    );
    // The runs that ended before the grace were not touched again.
    const all = await records();
    for (const id of ids.filter((i) => !leftIds.has(i))) {
      expect(all.get(id)!.status).to.equal('success');
      expect((all.get(id)!.extra as { resumes?: unknown }).resumes).to.equal(undefined);
    }
  });
});
