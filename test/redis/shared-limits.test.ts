/**
 * The rate limit and the auth lockout of two services sharing one Redis count together: a
 * client cannot double its budget (or its password guesses) by alternating instances.
 */
import { expect } from 'chai';
import { call, startTestService, type TestService } from '../http/harness.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

describe('scale-out: limits shared through Redis', () => {
  let redis: TestRedis;
  let a: TestService | undefined;
  let b: TestService | undefined;

  before(async () => {
    redis = await startTestRedis();
  });
  after(async () => {
    await redis.stop();
  });
  afterEach(async () => {
    await b?.dispose();
    await a?.dispose();
    a = b = undefined;
  });

  async function startPair(env: Record<string, string>): Promise<[TestService, TestService]> {
    const prefix = `limits${Math.random().toString(36).slice(2, 8)}`;
    const shared = { REDIS_URL: redis.url, AGENTIC_REDIS_PREFIX: prefix, ...env };
    a = await startTestService({ env: shared });
    b = await startTestService({ env: shared, root: a.root });
    return [a, b];
  }

  it('counts requests to both services against one sliding window', async () => {
    const [first, second] = await startPair({ AGENTIC_RATE_LIMIT_DEFAULT: '5/minute' });
    const statuses: number[] = [];
    for (const service of [first, second, first, second, first]) {
      statuses.push((await call(service.url, 'GET', '/api/runs')).status);
    }
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200]);
    const refused = await call(second.url, 'GET', '/api/runs');
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refused.headers.get('ratelimit-remaining')).to.equal('0');
    expect((await call(first.url, 'GET', '/api/runs')).status).to.equal(429);
  });

  it('locks a client out on both services after failures spread over them', async () => {
    const [first, second] = await startPair({
      AGENTIC_API_KEY: 'right-key',
      AGENTIC_AUTH_LOCKOUT_THRESHOLD: '3',
      AGENTIC_AUTH_LOCKOUT_WINDOW_SECONDS: '60',
      AGENTIC_AUTH_LOCKOUT_DURATION_SECONDS: '120',
    });
    const wrong = { 'x-api-key': 'wrong' };
    const right = { 'x-api-key': 'right-key' };
    expect((await call(first.url, 'GET', '/api/runs', undefined, wrong)).status).to.equal(401);
    expect((await call(second.url, 'GET', '/api/runs', undefined, wrong)).status).to.equal(401);
    expect((await call(first.url, 'GET', '/api/runs', undefined, right)).status).to.equal(200);
    // The success cleared the count everywhere: two more failures do not lock.
    expect((await call(second.url, 'GET', '/api/runs', undefined, wrong)).status).to.equal(401);
    expect((await call(first.url, 'GET', '/api/runs', undefined, wrong)).status).to.equal(401);
    expect((await call(second.url, 'GET', '/api/runs', undefined, right)).status).to.equal(200);
    for (const service of [first, second, first]) {
      expect((await call(service.url, 'GET', '/api/runs', undefined, wrong)).status).to.equal(401);
    }
    const locked = await call(second.url, 'GET', '/api/runs', undefined, right);
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(119, 120);
    expect((await call(first.url, 'GET', '/api/runs', undefined, right)).status).to.equal(429);
  });
});
