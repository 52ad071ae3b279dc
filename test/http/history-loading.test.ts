import { expect } from 'chai';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { startedRunRecord } from '../../src/store/run-record.js';
import { writeFileAtomic } from '../../src/files/atomic-write.js';
import { compileWorkflow } from '../../src/workflow/compile.js';
import { call, startTestService, type TestService } from './harness.js';

const OLD = '20250102T000000000Z_wf_old-1.json';

/** A run left `running` by a process that is gone (no owner): start-up recovery rewrites it. */
function orphan(): RunRecord {
  return startedRunRecord({
    runId: 'old-1',
    workflow: compileWorkflow({ name: 'wf', steps: [{ name: 'a', agent: 'tier0_echo' }] }),
    adapter: 'native',
    inputs: {},
    startTime: Date.UTC(2025, 0, 2),
    extra: {},
  });
}

describe('the service while its run history loads', () => {
  let root: string;
  let svc: TestService | undefined;
  let release: () => void = () => undefined;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-loading-'));
    await cp(join(packageRoot, 'workflows'), join(root, 'workflows'), { recursive: true });
    await mkdir(join(root, 'runs'));
    await writeFile(join(root, 'runs', OLD), JSON.stringify(orphan()));
  });
  afterEach(async () => {
    release();
    await svc?.dispose();
    svc = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('listens at once: readiness and history answer 503 until the scan ends, runs start meanwhile', async () => {
    // The start-up scan's rewrite of the orphan waits for the test: the index is not loaded.
    const gate = new Promise<void>((resolve) => (release = resolve));
    const s = (svc = await startTestService({
      root,
      waitForHistory: false,
      // The orphan is marked interrupted (with resume on it would be resumed).
      env: { AGENTIC_RESUME: 'manual' },
      writeFile: async (path, data) => {
        if (basename(path) === OLD) await gate;
        return writeFileAtomic(path, data);
      },
    }));
    const ready = await call(s.url, 'GET', '/api/health/ready');
    expect(ready.status).to.equal(503);
    expect((ready.body as { checks: Record<string, unknown> }).checks.run_history).to.deep.equal({
      ok: false,
      detail: 'the run history is loading (0 runs indexed so far)',
    });
    for (const path of ['/api/runs', '/api/runs/summary', '/api/runs/old-1']) {
      const res = await call(s.url, 'GET', path);
      expect(res.status, path).to.equal(503);
      expect(res.headers.get('retry-after'), path).to.equal('2');
      expect(res.body, path).to.deep.equal({
        detail: 'the run history is loading after start-up; try again shortly',
      });
    }
    // A file name needs no index.
    expect((await call(s.url, 'GET', `/api/runs/${OLD}`)).status).to.equal(200);
    const started = await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
    expect(started.status).to.equal(200);
    await s.finished((started.body as { run_id: string }).run_id);

    release();
    await s.history.whenLoaded();
    expect((await call(s.url, 'GET', '/api/health/ready')).status).to.equal(200);
    const old = await call(s.url, 'GET', '/api/runs/old-1');
    expect(old.body).to.include({ status: 'failed', error: 'interrupted' });
    const listed = await call(s.url, 'GET', '/api/runs');
    expect((listed.body as { run_id: string }[]).map((r) => r.run_id)).to.include('old-1');
    expect((await readdir(join(root, 'runs'))).filter((n) => n.endsWith('.json'))).to.have.length(
      2,
    );
  });

  it('refuses a run_id that names a finished run with 409, keeping the older run reachable', async () => {
    const s = (svc = await startTestService({ root, waitForHistory: false }));
    const again = await call(s.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      run_id: 'old-1',
    });
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal({
      detail: "run 'old-1' already exists; choose another run_id (or omit it)",
    });
    const old = await call(s.url, 'GET', '/api/runs/old-1');
    expect(old.body).to.include({ workflow_name: 'wf', status: 'failed' });
  });
});
