import { expect } from 'chai';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../../src/generated/run-record.js';
import { sleepyServiceRoot, spawnService, until, type ServiceProcess } from './service-process.js';

/** Enough runs that writing their end records one at a time takes far longer than the grace. */
const RUNS = 1000;
const GRACE_SECONDS = 1;

describe('service process: SIGTERM with more runs than the grace can write', function () {
  this.timeout(180_000);
  let root: string;
  let env: Record<string, string>;
  const services: ServiceProcess[] = [];
  beforeEach(async () => {
    const made = await sleepyServiceRoot('agentic-e2e-grace-', 600000);
    root = made.root;
    env = {
      ...made.env,
      AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
      AGENTIC_MAX_ACTIVE_RUNS: String(RUNS),
      AGENTIC_WRITE_CONCURRENCY: '1',
      AGENTIC_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      LOG_FORMAT: 'json',
      // Cancelled at the grace, then marked interrupted (left and resumed: test/e2e/resume.test.ts).
      AGENTIC_RESUME: 'off',
    };
  });
  afterEach(async () => {
    for (const { child, exit } of services.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    }
    await rm(root, { recursive: true, force: true });
  });

  function service(): ServiceProcess {
    const started = spawnService(env);
    services.push(started);
    return started;
  }

  async function statuses(): Promise<Map<string, string>> {
    const runs = join(root, 'runs');
    const files = (await readdir(runs)).filter((name) => name.endsWith('.json'));
    const map = new Map<string, string>();
    for (const name of files) {
      const record = JSON.parse(await readFile(join(runs, name), 'utf8')) as RunRecord;
      map.set(record.run_id, `${record.status}${record.error === null ? '' : `: ${record.error}`}`);
    }
    return map;
  }

  it('exits soon after the grace, says how many runs it left unwritten, and the next start marks them interrupted', async () => {
    const first = service();
    const url = await first.listening;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < RUNS) {
          const id = `grace-${next++}`;
          const response = await fetch(`${url}/api/run`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ workflow: 'sleepy', run_id: id, adapter: 'native' }),
          });
          expect(response.status, await response.text()).to.equal(200);
        }
      }),
    );
    const signalled = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.exit, first.output().slice(-2000)).to.equal(0);
    const seconds = (Date.now() - signalled) / 1000;
    // The grace, the drain's floor (1 s) and the rest of the shutdown; before, the drain wrote
    // every end record whatever it took (1000 at one write at a time: about 10 s on this machine).
    expect(seconds, `exited after ${seconds} s`).to.be.below(GRACE_SECONDS + 1 + 5);

    const said = first.logs().filter((l) => typeof l.unwritten === 'number');
    expect(said, first.output().slice(-3000)).to.have.length(1);
    const unwritten = said[0]!.unwritten as number;
    expect(unwritten).to.be.above(0);
    expect(said[0]!.msg).to.equal(
      'shutdown grace passed: runs left unwritten; their files keep the start record and the next start marks them interrupted',
    );
    // No record per run for runs whose end record simply had no turn.
    expect(first.logs().filter((l) => l.msg === 'run record lost: not written before shutdown')).to
      .be.empty;
    const before = await statuses();
    expect(before.size).to.equal(RUNS);
    const running = [...before].filter(([, status]) => status === 'running');
    expect(running).to.have.length(unwritten);
    const written = [...before.values()].filter((s) => s === 'failed: runtime shutting down');
    expect(written.length + running.length).to.equal(RUNS);

    const second = service();
    const url2 = await second.listening;
    await until('readiness', async () => (await fetch(`${url2}/api/health/ready`)).ok, 60_000);
    const scanned = second
      .logs()
      .find((l) => l.msg?.toString().startsWith('runs directory scanned'));
    expect(scanned).to.include({ recovered: unwritten, liveRuns: 0 });
    const after = await statuses();
    for (const [runId] of running) expect(after.get(runId)).to.equal('failed: interrupted');
    expect([...after.values()].filter((s) => s === 'running')).to.be.empty;
    second.child.kill('SIGTERM');
    expect(await second.exit).to.equal(0);
  });
});
