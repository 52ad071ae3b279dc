import { expect } from 'chai';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { checkRedisAtStart, redactRedisUrl } from '../../../src/scale/redis-connection.js';
import { freePort } from '../../redis/redis-server.js';

describe('config: scale-out variables', () => {
  it('defaults to one process without Redis', () => {
    const config = loadConfig({});
    expect(config.role).to.equal('all');
    expect(config.redisUrl).to.equal(undefined);
    expect(config.workerConcurrency).to.equal(50);
    expect(config.eventStreamTtlMs).to.equal(3_600_000);
    expect(config.redisPrefix).to.equal('agentic');
  });

  for (const role of ['api', 'worker']) {
    it(`refuses AGENTIC_ROLE=${role} without REDIS_URL`, () => {
      expect(() => loadConfig({ AGENTIC_ROLE: role }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(new RegExp(`AGENTIC_ROLE=${role} needs REDIS_URL`));
    });
  }

  it("opens a worker's endpoint on AGENTIC_WORKER_PORT, else on 9464 only with metrics on", () => {
    const redis = { AGENTIC_ROLE: 'worker', REDIS_URL: 'redis://127.0.0.1:6390' };
    expect(loadConfig(redis).workerPort).to.equal(undefined);
    expect(loadConfig({ ...redis, AGENTIC_METRICS: '1' }).workerPort).to.equal(9464);
    expect(loadConfig({ ...redis, AGENTIC_WORKER_PORT: '0' }).workerPort).to.equal(0);
    expect(
      loadConfig({ ...redis, AGENTIC_METRICS: '1', AGENTIC_WORKER_PORT: '9100' }).workerPort,
    ).to.equal(9100);
    expect(() => loadConfig({ ...redis, AGENTIC_WORKER_PORT: '70000' })).to.throw(
      ConfigError,
      /AGENTIC_WORKER_PORT/,
    );
  });

  it('rejects a REDIS_URL that is not redis:// or rediss://', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' })).to.throw(
      ConfigError,
      /REDIS_URL/,
    );
  });

  it('redacts the password of a Redis URL', () => {
    expect(redactRedisUrl('redis://user:s3cret@db:6379/0')).to.equal('redis://user:***@db:6379/0');
    expect(redactRedisUrl('redis://db:6379')).to.equal('redis://db:6379');
  });

  it('fails the start-up check with a configuration error naming the unreachable Redis', async () => {
    const port = await freePort();
    const error = await checkRedisAtStart(`redis://:s3cret@127.0.0.1:${port}`, 1000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).to.contain(`redis://:***@127.0.0.1:${port}`).and.contain('unreachable');
    expect(message).not.to.contain('s3cret');
  });
});
