import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';

/** A run that stays active until cancelled. */
const SLOW = `name: slow
steps:
  - { name: wait, agent: tier0_sleep, inputs: { ms: 600000 } }
`;

describe('POST /api/run with AGENTIC_MAX_ACTIVE_RUNS active', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService({ env: { AGENTIC_MAX_ACTIVE_RUNS: '2' } });
    await writeFile(join(svc.workflowsDir, 'slow.yaml'), SLOW);
  });
  afterEach(async () => {
    for (const runId of svc.runtime.activeRuns()) await svc.runtime.cancel(runId);
    await svc.dispose();
  });

  async function startSlow(): Promise<string> {
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'slow' });
    expect(res.status, res.text).to.equal(200);
    return (res.body as { run_id: string }).run_id;
  }

  it('answers 429 {detail} with Retry-After, starts nothing, and admits a run once one ends', async () => {
    const first = await startSlow();
    await startSlow();
    const refused = await call(svc.url, 'POST', '/api/run', {
      workflow: 'slow',
      run_id: 'over-the-limit',
    });
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.equal('5');
    expect(refused.body).to.deep.equal({
      detail:
        'too many active runs: 2 are running, the most this service runs at once; try again later',
    });
    expect(svc.runtime.isActive('over-the-limit')).to.equal(false);
    expect((await call(svc.url, 'GET', '/api/runs/over-the-limit')).status).to.equal(404);

    expect((await call(svc.url, 'POST', `/api/runs/${first}/cancel`)).status).to.equal(200);
    await svc.finished(first);
    await startSlow();
  });

  it('admits exactly the limit when requests race', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call(svc.url, 'POST', '/api/run', { workflow: 'slow' })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).to.deep.equal([200, 200, 429, 429, 429, 429]);
    expect(svc.runtime.activeRuns()).to.have.length(2);
  });

  it('readiness reports the active runs and stays ready at the limit', async () => {
    const before = await call(svc.url, 'GET', '/api/health/ready');
    expect(before.status).to.equal(200);
    expect((before.body as { checks: Record<string, unknown> }).checks.active_runs).to.deep.equal({
      ok: true,
      detail: '0 of at most 2 runs active',
    });
    await startSlow();
    await startSlow();
    const atLimit = await call(svc.url, 'GET', '/api/health/ready');
    expect(atLimit.status).to.equal(200);
    expect((atLimit.body as { checks: Record<string, unknown> }).checks.active_runs).to.deep.equal({
      ok: true,
      detail: '2 of at most 2 runs active',
    });
  });
});
