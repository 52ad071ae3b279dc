/**
 * Rerun where runs are queued to workers (REDIS_URL): the queue does not carry forks, so the
 * service says so (501) instead of starting something else.
 */
import { expect } from 'chai';
import { call, startTestService, type TestService } from '../http/harness.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

describe('POST /api/runs/{run_id}/rerun with runs queued to workers', function () {
  this.timeout(20_000);
  let redis: TestRedis;
  let svc: TestService;
  before(async () => {
    redis = await startTestRedis();
    svc = await startTestService({ env: { REDIS_URL: redis.url } });
  });
  after(async () => {
    await svc?.dispose();
    await redis?.stop();
  });

  it('answers 501 with a detail naming the cause and the way that works', async () => {
    const started = await call(svc.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
    const source = await svc.finished((started.body as { run_id: string }).run_id);
    const res = await call(svc.url, 'POST', `/api/runs/${source.run_id}/rerun`, {
      from_step: 'report',
    });
    expect(res.status).to.equal(501);
    expect(res.body).to.deep.equal({
      detail:
        'rerun is not available when runs are queued to workers (REDIS_URL set); agentic rerun does it from the shared runs directory',
    });
  });
});
