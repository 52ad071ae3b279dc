import { expect } from 'chai';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../../src/engine/types.js';
import { validateRecord } from '../conformance/helpers.js';
import { call, startTestService, type TestService } from './harness.js';

const SLOW = `name: slow
steps:
  - name: wait
    agent: tier0_sleep
    inputs:
      ms: 60000
`;

describe('POST /api/runs/{run_id}/rerun', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
    await writeFile(join(svc.workflowsDir, 'slow.yaml'), SLOW);
  });
  afterEach(async () => {
    await svc.dispose();
  });

  async function finishedRun(): Promise<RunRecord> {
    const res = await call(svc.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      input_data: { text: '  hi  ', label: 'smoke' },
    });
    expect(res.status, res.text).to.equal(200);
    return svc.finished((res.body as { run_id: string }).run_id);
  }

  it('starts a new run that reuses the steps upstream of from_step and runs the rest, with new inputs', async () => {
    const source = await finishedRun();
    expect(source.status).to.equal('success');
    const res = await call(svc.url, 'POST', `/api/runs/${source.run_id}/rerun`, {
      from_step: 'report',
      inputs: { label: 'demo' },
    });
    expect(res.status, res.text).to.equal(200);
    const { run_id: forkId, status } = res.body as { run_id: string; status: string };
    expect(status).to.equal('pending');
    expect(forkId).to.not.equal(source.run_id);
    const fork = await svc.finished(forkId);
    expect(fork.status).to.equal('success');
    expect(fork.extra.forked_from).to.deep.equal({ run_id: source.run_id, step: 'report' });
    expect(fork.inputs).to.deep.equal({ text: '  hi  ', label: 'demo' });
    expect(fork.final_output).to.deep.include({ summary: '[demo] hi (2 characters)' });
    expect(fork.steps.map((s) => s.metadata.reused_from?.run_id ?? null)).to.deep.equal([
      source.run_id,
      source.run_id,
      null,
    ]);
    expect(fork.steps[0]!.output).to.deep.equal(source.steps[0]!.output);

    const detail = await call(svc.url, 'GET', `/api/runs/${forkId}`);
    expect(detail.status).to.equal(200);
    expect(detail.body).to.deep.equal(fork);
    expect(validateRecord(detail.body), JSON.stringify(validateRecord.errors)).to.equal(true);
  });

  it('404 for an unknown run', async () => {
    const res = await call(svc.url, 'POST', '/api/runs/never-ran/rerun', { from_step: 'a' });
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ detail: 'Run not found' });
  });

  it('422 for a step the run does not have, a body without from_step, and invalid inputs', async () => {
    const source = await finishedRun();
    const path = `/api/runs/${source.run_id}/rerun`;
    const unknown = await call(svc.url, 'POST', path, { from_step: 'nope' });
    expect(unknown.status).to.equal(422);
    const msg = `run ${source.run_id} has no step "nope"`;
    expect(unknown.body).to.deep.equal({
      detail: [{ loc: ['body', 'from_step'], msg, type: 'value_error.unknown_step' }],
    });
    const missing = await call(svc.url, 'POST', path, { inputs: {} });
    expect(missing.status).to.equal(422);
    expect(missing.body).to.deep.equal({
      detail: [{ loc: ['body', 'from_step'], msg: 'Field required', type: 'missing' }],
    });
    const bad = await call(svc.url, 'POST', path, {
      from_step: 'report',
      inputs: { label: 'other' },
    });
    expect(bad.status).to.equal(422);
    const detail = (bad.body as { detail: { loc: unknown[] }[] }).detail;
    expect(detail.map((d) => d.loc)).to.deep.equal([['body', 'inputs', 'label']]);
  });

  it('409 for a run still running', async () => {
    const res = await call(svc.url, 'POST', '/api/run', { workflow: 'slow', run_id: 'sleepy' });
    expect(res.status).to.equal(200);
    const rerun = await call(svc.url, 'POST', '/api/runs/sleepy/rerun', { from_step: 'wait' });
    expect(rerun.status).to.equal(409);
    expect(rerun.body).to.deep.equal({
      detail: 'run sleepy is still running; rerun it once it has ended',
    });
    await call(svc.url, 'POST', '/api/runs/sleepy/cancel');
    await svc.finished('sleepy');
  });

  it('409 when the workflow no longer has the step, or is gone', async () => {
    const source = await finishedRun();
    const path = `/api/runs/${source.run_id}/rerun`;
    const file = join(svc.workflowsDir, 'test_deterministic.yaml');
    await writeFile(
      file,
      'name: test_deterministic\nsteps:\n  - { name: process, agent: tier0_process }\n',
    );
    const changed = await call(svc.url, 'POST', path, { from_step: 'report' });
    expect(changed.status).to.equal(409);
    expect(changed.body).to.deep.equal({
      detail: `step "report" is no longer in workflow test_deterministic (it changed since run ${source.run_id})`,
    });
    await rm(file);
    const gone = await call(svc.url, 'POST', path, { from_step: 'report' });
    expect(gone.status).to.equal(409);
    expect(gone.body).to.deep.equal({
      detail: `the workflow test_deterministic of run ${source.run_id} is no longer in the workflows directory; a rerun needs it`,
    });
  });
});
