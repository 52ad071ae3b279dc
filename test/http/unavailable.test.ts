import { expect } from 'chai';
import { rm, writeFile } from 'node:fs/promises';
import { call, startTestService, type TestService } from './harness.js';

const YAML = 'name: hello_flow\nsteps:\n  - { name: a, agent: tier0_echo }\n';

/**
 * `/sys` is a real directory on a file system that refuses new files to everyone, root
 * included (EACCES; EROFS where it is mounted read-only): a runs or workflows directory that
 * exists, has a file system to statfs, and cannot be written.
 */
const UNWRITABLE_DIR = '/sys';

describe('503 answers: real write checks, no absolute paths', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  it('readiness fails runs_dir_write when the runs directory exists but cannot be written, and POST /api/run is 503', async () => {
    svc = await startTestService({
      env: { AGENTIC_RUNS_DIR: UNWRITABLE_DIR, AGENTIC_RUNS_MIN_FREE_MB: '0' },
    });
    const ready = await call(svc.url, 'GET', '/api/health/ready');
    expect(ready.status).to.equal(503);
    expect(ready.headers.get('retry-after')).to.equal('5');
    const checks = (ready.body as { checks: Record<string, { ok: boolean; detail?: string }> })
      .checks;
    expect(checks.runs_dir).to.deep.equal({ ok: true });
    expect(checks.runs_dir_space).to.deep.equal({ ok: true });
    expect(checks.runs_dir_write?.ok).to.equal(false);
    expect(checks.runs_dir_write?.detail).to.match(
      /^cannot write to the runs directory 'sys' \((EACCES|EROFS|EPERM)\)$/,
    );

    const refused = await call(svc.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
    expect(refused.status).to.equal(503);
    expect((refused.body as { detail: string }).detail).to.match(
      /^cannot write the run file in the runs directory \((EACCES|EROFS|EPERM)\)$/,
    );
  });

  it('PUT /api/workflows answers 503 naming no path when the directory is missing, a file, or unwritable', async () => {
    svc = await startTestService();
    await rm(svc.workflowsDir, { recursive: true, force: true });
    const missing = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { yaml_text: YAML });
    expect([missing.status, missing.body]).to.deep.equal([
      503,
      { detail: 'the workflows directory does not exist' },
    ]);

    await writeFile(svc.workflowsDir, 'a file where the directory was');
    const file = await call(svc.url, 'PUT', '/api/workflows/hello_flow', { yaml_text: YAML });
    expect([file.status, file.body]).to.deep.equal([
      503,
      { detail: 'the workflows directory is not writable' },
    ]);
    await svc.dispose();

    svc = await startTestService({ env: { AGENTIC_WORKFLOWS_DIR: UNWRITABLE_DIR } });
    const unwritable = await call(svc.url, 'PUT', '/api/workflows/hello_flow', {
      yaml_text: YAML,
    });
    expect([unwritable.status, unwritable.body]).to.deep.equal([
      503,
      { detail: 'the workflows directory is not writable' },
    ]);
  });
});
