import { expect } from 'chai';
import { call, startTestService, type TestService } from './harness.js';

type Summary = { run_id: string; status: string; start_time: string };

describe('GET /api/runs filters: status, since, until', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.dispose();
  });

  async function run(workflow: string, runId: string, input?: Record<string, unknown>) {
    const res = await call(svc.url, 'POST', '/api/run', {
      workflow,
      run_id: runId,
      ...(input === undefined ? {} : { input_data: input }),
    });
    expect(res.status, res.text).to.equal(200);
    return svc.finished(runId);
  }

  it('keeps the runs of one status, and those started within a time range', async () => {
    const ok1 = await run('test_deterministic', 'ok-1');
    // test_deterministic's inputs: a wrong type fails the run at its step, not at the POST.
    await run('test_deterministic', 'ok-2');
    const all = (await call(svc.url, 'GET', '/api/runs')).body as Summary[];
    expect(all.map((r) => r.run_id)).to.deep.equal(['ok-2', 'ok-1']);

    const success = await call(svc.url, 'GET', '/api/runs?status=success');
    expect(success.status, success.text).to.equal(200);
    expect((success.body as Summary[]).map((r) => r.run_id)).to.deep.equal(['ok-2', 'ok-1']);
    const failed = await call(svc.url, 'GET', '/api/runs?status=failed');
    expect(failed.body).to.deep.equal([]);

    const second = all[0]!.start_time;
    const since = await call(svc.url, 'GET', `/api/runs?since=${encodeURIComponent(second)}`);
    expect((since.body as Summary[]).map((r) => r.run_id)).to.deep.equal(['ok-2']);
    const until = await call(
      svc.url,
      'GET',
      `/api/runs?until=${encodeURIComponent(ok1.start_time)}`,
    );
    expect((until.body as Summary[]).map((r) => r.run_id)).to.deep.equal(['ok-1']);
  });

  it('422 for an unknown status or a time that is not a date', async () => {
    for (const [query, name] of [
      ['status=done', 'status'],
      ['since=yesterday', 'since'],
      ['until=2026-13-45T99:00:00Z', 'until'],
    ] as const) {
      const res = await call(svc.url, 'GET', `/api/runs?${query}`);
      expect(res.status, query).to.equal(422);
      expect((res.body as { detail: { loc: unknown[] }[] }).detail[0]?.loc).to.deep.equal([
        'query',
        name,
      ]);
    }
  });
});
