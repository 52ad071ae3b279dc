import { expect } from 'chai';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import { call, startTestService, type TestService } from './harness.js';

function finished(runId: string, start: string): Record<string, unknown> {
  return {
    run_id: runId,
    workflow_name: 'wf',
    adapter: 'native',
    status: 'success',
    inputs: {},
    steps: [],
    final_output: null,
    success_rate: 100,
    total_duration_ms: 1,
    step_count: 0,
    failed_step_count: 0,
    start_time: start,
    end_time: start,
    error: null,
    extra: {},
  };
}

describe('run retention in the service (AGENTIC_RUNS_RETENTION_DAYS, AGENTIC_RUNS_MAX)', () => {
  let root: string;
  let svc: TestService | undefined;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-retention-'));
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await mkdir(join(root, 'runs'));
    for (const [id, start] of [
      ['ancient', '2020-01-01T00:00:00.000Z'],
      ['recent-1', new Date(Date.now() - 3_600_000).toISOString()],
      ['recent-2', new Date(Date.now() - 1_800_000).toISOString()],
    ] as const) {
      const stamp = start.replace(/[-:.]/g, '');
      await writeFile(
        join(root, 'runs', `${stamp}_wf_${id}.json`),
        JSON.stringify(finished(id, start)),
      );
    }
  });
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
    await rm(root, { recursive: true, force: true });
  });

  const runIds = async (): Promise<string[]> =>
    (await readdir(join(root, 'runs')))
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.replace(/^.*_wf_|\.json$/g, '').replace(/^.*_test_deterministic_/, ''))
      .sort();

  /** Pruning runs in the background after the history loads: its effect shows on disk. */
  async function until(check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out; runs: ${(await runIds()).join()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('keeps every run file by default', async () => {
    svc = await startTestService({ root });
    const listed = await call(svc.url, 'GET', '/api/runs');
    expect((listed.body as unknown[]).length).to.equal(3);
    expect(await runIds()).to.deep.equal(['ancient', 'recent-1', 'recent-2']);
  });

  it('removes runs older than AGENTIC_RUNS_RETENTION_DAYS at start-up', async () => {
    svc = await startTestService({ root, env: { AGENTIC_RUNS_RETENTION_DAYS: '30' } });
    await until(async () => !(await runIds()).includes('ancient'));
    expect(await runIds()).to.deep.equal(['recent-1', 'recent-2']);
    expect((await call(svc.url, 'GET', '/api/runs/ancient')).status).to.equal(404);
  });

  it('keeps the newest AGENTIC_RUNS_MAX runs, also after new runs are written', async () => {
    const s = (svc = await startTestService({ root, env: { AGENTIC_RUNS_MAX: '2' } }));
    await until(async () => (await runIds()).length === 2);
    expect(await runIds()).to.deep.equal(['recent-1', 'recent-2']);
    const started = await call(s.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      run_id: 'fresh',
    });
    expect(started.status).to.equal(200);
    await s.finished('fresh');
    await until(async () => (await runIds()).length === 2);
    expect(await runIds()).to.deep.equal(['fresh', 'recent-2']);
  });
});
