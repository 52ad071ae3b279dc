import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../../src/generated/run-record.js';
import {
  MAIN,
  sleepyServiceRoot,
  spawnService,
  until,
  type ServiceProcess,
} from './service-process.js';

const LEASE_SECONDS = 2;
/** What the check allows past the lease: a look (a third of it), the scan, a loaded machine. */
const MARGIN_MS = 8_000;

describe('runs of a process killed and restarted at once (issue 30)', function () {
  this.timeout(120_000);
  let root: string;
  let env: Record<string, string>;
  const services: ServiceProcess[] = [];
  beforeEach(async () => {
    const made = await sleepyServiceRoot('agentic-e2e-orphans-', 60000);
    root = made.root;
    env = {
      ...made.env,
      AGENTIC_OWNER_LEASE_SECONDS: String(LEASE_SECONDS),
      AGENTIC_SHUTDOWN_GRACE_SECONDS: '0',
      LOG_FORMAT: 'json',
      // Marking the runs of a dead owner interrupted (resumed with auto: test/e2e/resume.test.ts).
      AGENTIC_RESUME: 'manual',
    };
  });
  afterEach(async () => {
    for (const { child, exit } of services.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    }
    await rm(root, { recursive: true, force: true });
  });

  function service(command?: { file: string; args: string[] }): ServiceProcess {
    const started = spawnService(env, command);
    services.push(started);
    return started;
  }

  async function startRuns(url: string, ids: string[]): Promise<void> {
    for (const id of ids) {
      const response = await fetch(`${url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'sleepy', run_id: id }),
      });
      expect(response.status, await response.text()).to.equal(200);
    }
  }

  async function records(): Promise<RunRecord[]> {
    const runs = join(root, 'runs');
    const names = (await readdir(runs)).filter((n) => n.endsWith('.json'));
    return Promise.all(
      names.map(async (n) => JSON.parse(await readFile(join(runs, n), 'utf8')) as RunRecord),
    );
  }

  async function ownerPids(): Promise<number[]> {
    const runs = join(root, 'runs');
    const names = (await readdir(runs)).filter((n) => n.endsWith('.owner'));
    return Promise.all(
      names.map(
        async (n) => (JSON.parse(await readFile(join(runs, n), 'utf8')) as { pid: number }).pid,
      ),
    );
  }

  /** Every run of `ids` failed `interrupted` on disk and in GET /api/runs, within the bound. */
  async function allInterrupted(url: string, ids: string[], since: number): Promise<void> {
    const bound = LEASE_SECONDS * 1000 + MARGIN_MS;
    await until(
      'the runs of the dead process to end',
      async () => (await records()).every((r) => r.status !== 'running'),
      bound,
    );
    expect(Date.now() - since).to.be.below(bound);
    for (const record of await records()) {
      expect(record).to.include({ status: 'failed', error: 'interrupted' });
    }
    await until('readiness', async () => (await fetch(`${url}/api/health/ready`)).ok);
    const listed = (await (await fetch(`${url}/api/runs`)).json()) as {
      run_id: string;
      status: string;
    }[];
    const statuses = Object.fromEntries(listed.map((r) => [r.run_id, r.status]));
    expect(statuses).to.deep.equal(Object.fromEntries(ids.map((id) => [id, 'failed'])));
    const left = (await readdir(join(root, 'runs'))).filter((n) => n.startsWith('.'));
    expect(left.filter((n) => n.endsWith('.journal'))).to.deep.equal([]);
    expect(left.filter((n) => n.endsWith('.owner'))).to.have.length(1);
  }

  it('recovers the runs of a process killed -9 and restarted at once', async () => {
    const first = service();
    const ids = ['quick-1', 'quick-2', 'quick-3'];
    await startRuns(await first.listening, ids);
    first.child.kill('SIGKILL');
    const killed = Date.now();
    const second = service();
    const url = await second.listening;
    await first.exit;
    await allInterrupted(url, ids, killed);
  });

  it('recovers them while the killed process is still an unreaped zombie', async () => {
    // sh execs into sleep, which never waits: the killed service stays its zombie child.
    const first = service({
      file: 'sh',
      args: ['-c', `"${process.execPath}" "${MAIN}" & exec sleep 1000`],
    });
    const ids = ['zombie-1', 'zombie-2', 'zombie-3'];
    await startRuns(await first.listening, ids);
    const [pid] = await ownerPids();
    process.kill(pid!, 'SIGKILL');
    const killed = Date.now();
    const state = (): string => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
    };
    await until('the zombie', () => state() === 'Z');
    const second = service();
    const url = await second.listening;
    await allInterrupted(url, ids, killed);
    expect(state()).to.equal('Z');
    // At start-up already: a zombie is gone.
    const scanned = second.logs().find((l) => String(l.msg).startsWith('runs directory scanned'));
    expect(scanned).to.include({ liveRuns: 0, recovered: 3 });
  });

  it('notices, while it runs, that another owner of runs in its directory died, and never touches a live one', async () => {
    const watcher = service();
    const url = await watcher.listening;
    await startRuns(url, ['own-1']);
    const other = service();
    const ids = ['other-1', 'other-2'];
    await startRuns(await other.listening, ids);
    // Both alive for more than a lease: nothing is recovered.
    const quiet = Date.now();
    await until('two leases', () => Date.now() - quiet > 2 * LEASE_SECONDS * 1000);
    expect((await records()).map((r) => r.status)).to.deep.equal(['running', 'running', 'running']);
    other.child.kill('SIGKILL');
    const killed = Date.now();
    await other.exit;
    const bound = LEASE_SECONDS * 1000 + MARGIN_MS;
    await until(
      'the runs of the dead process to end',
      async () =>
        (await records()).filter((r) => r.status === 'failed' && r.error === 'interrupted')
          .length === 2,
      bound,
    );
    expect(Date.now() - killed).to.be.below(bound);
    const byId = Object.fromEntries((await records()).map((r) => [r.run_id, r.status]));
    expect(byId).to.deep.equal({ 'own-1': 'running', 'other-1': 'failed', 'other-2': 'failed' });
    const listed = (await (await fetch(`${url}/api/runs`)).json()) as {
      run_id: string;
      status: string;
    }[];
    expect(Object.fromEntries(listed.map((r) => [r.run_id, r.status]))).to.deep.equal({
      'own-1': 'running',
      'other-1': 'failed',
      'other-2': 'failed',
    });
    expect(
      watcher.logs().find((l) => l.msg === 'owner of runs gone; its runs marked interrupted'),
    ).to.include({ recovered: 2 });
  });
});
