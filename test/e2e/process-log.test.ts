import { expect } from 'chai';
import { readdir, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../../src/generated/run-record.js';
import { PROCESS_LOG_FILE } from '../../src/store/process-log.js';
import { sleepyServiceRoot, spawnService, until, type ServiceProcess } from './service-process.js';

/**
 * The promise of the process log on the real process (dist/): what `POST /api/run` and a run's
 * end say is durable survives kill -9 even though run files are written without an fsync. The
 * lost page cache of a machine crash is simulated by removing, emptying and rolling back the
 * run files after the kill: only the log (fdatasynced) is left to rebuild them from.
 */
describe('the process log across kill -9 (issue 26, point 7)', function () {
  this.timeout(120_000);
  let root: string;
  let env: Record<string, string>;
  const services: ServiceProcess[] = [];
  beforeEach(async () => {
    const made = await sleepyServiceRoot('agentic-e2e-process-log-', 60_000);
    root = made.root;
    env = { ...made.env, AGENTIC_SHUTDOWN_GRACE_SECONDS: '0', LOG_FORMAT: 'json' };
  });
  afterEach(async () => {
    for (const { child, exit } of services.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    }
    await rm(root, { recursive: true, force: true });
  });

  // Resume manual: the accepted runs stay as the log rebuilt them (interrupted) rather than go
  // on (resume is tested in resume.test.ts and chaos.test.ts).
  function service(): ServiceProcess {
    const started = spawnService({ ...env, AGENTIC_RESUME: 'manual' });
    services.push(started);
    return started;
  }

  const runs = (): string => join(root, 'runs');
  async function runFile(runId: string): Promise<string> {
    const name = (await readdir(runs())).find((n) => n.endsWith(`_${runId}.json`));
    if (name === undefined) throw new Error(`no run file for ${runId}`);
    return join(runs(), name);
  }
  async function post(url: string, workflow: string, runId: string): Promise<void> {
    const response = await fetch(`${url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow, run_id: runId }),
    });
    expect(response.status, await response.text()).to.equal(200);
  }
  async function status(url: string, runId: string): Promise<string | undefined> {
    const response = await fetch(`${url}/api/runs/${runId}`);
    if (response.status !== 200) return undefined;
    return ((await response.json()) as RunRecord).status;
  }

  it('rebuilds every accepted and every finished run from the log after kill -9, though the run files were lost', async () => {
    const first = service();
    const url = await first.listening;
    const accepted = ['acc-1', 'acc-2', 'acc-3'];
    const finished = ['fin-1', 'fin-2', 'fin-3'];
    for (const id of accepted) await post(url, 'sleepy', id);
    for (const id of finished) await post(url, 'test_deterministic', id);
    for (const id of finished) {
      await until(`${id} to end`, async () => (await status(url, id)) === 'success');
    }
    // Every record is in the log (the run files were never fsynced).
    const log = (await readdir(runs())).find((n) => PROCESS_LOG_FILE.test(n));
    expect(log, 'the process log').to.be.a('string');
    first.child.kill('SIGKILL');
    await first.exit;

    // The page cache lost with the machine: files never written back, or written back empty,
    // or holding the start record of a run whose end record's rename was lost.
    await unlink(await runFile('acc-1'));
    await truncate(await runFile('acc-2'), 0);
    await unlink(await runFile('fin-1'));
    await truncate(await runFile('fin-2'), 0);
    const fin3 = await runFile('fin-3');
    const rolledBack = JSON.parse(await readFile(fin3, 'utf8')) as Record<string, unknown>;
    await writeFile(fin3, JSON.stringify({ ...rolledBack, status: 'running', end_time: null }));

    const second = service();
    const url2 = await second.listening;
    await until('readiness', async () => (await fetch(`${url2}/api/health/ready`)).ok);
    for (const id of accepted) {
      const record = JSON.parse(await readFile(await runFile(id), 'utf8')) as RunRecord;
      // Its start record came back from the log; its process is gone, so it is interrupted.
      expect(record, id).to.include({ run_id: id, status: 'failed', error: 'interrupted' });
    }
    for (const id of finished) {
      const record = JSON.parse(await readFile(await runFile(id), 'utf8')) as RunRecord;
      expect(record, id).to.include({ run_id: id, status: 'success', error: null });
      expect(record.steps.every((step) => step.status === 'success')).to.equal(true);
      expect(await status(url2, id)).to.equal('success');
    }
    expect(await readdir(runs())).not.to.include(log);
    const scanned = second.logs().find((l) => String(l.msg).startsWith('runs directory scanned'));
    expect(scanned).to.include({ logsReplayed: 1, recordsReplayed: 5, recovered: 3 });
  });

  it('leaves no process log behind at a clean shutdown', async () => {
    const svc = service();
    const url = await svc.listening;
    await post(url, 'test_deterministic', 'clean-1');
    await until('the end', async () => (await status(url, 'clean-1')) === 'success');
    expect((await readdir(runs())).filter((n) => PROCESS_LOG_FILE.test(n))).to.have.length(1);
    svc.child.kill('SIGTERM');
    expect(await svc.exit).to.equal(0);
    // The pinned workflows (.workflows/) stay; no log, owner or temp file does.
    const left = (await readdir(runs())).filter((n) => n.startsWith('.') && n !== '.workflows');
    expect(left).to.deep.equal([]);
  });
});
