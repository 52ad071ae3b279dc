import { expect } from 'chai';
import {
  AuthLockout,
  SlidingWindowLimiter,
  constantTimeEqual,
} from '../../../src/security/index.js';

describe('SlidingWindowLimiter', () => {
  it('allows exactly `limit` requests in any window and frees slots as they age out', () => {
    let now = 1_000_000;
    const limiter = new SlidingWindowLimiter({ limit: 3, windowMs: 60_000, now: () => now });
    expect(limiter.hit('a').allowed).to.equal(true);
    now += 20_000;
    expect(limiter.hit('a').allowed).to.equal(true);
    now += 20_000;
    const third = limiter.hit('a');
    expect(third).to.include({ allowed: true, remaining: 0 });
    now += 10_000;
    const refused = limiter.hit('a');
    expect(refused.allowed).to.equal(false);
    // The first request (t=0) leaves the window at t=60s: 10s from now.
    expect(refused.retryAfterMs).to.equal(10_000);
    now += 10_000;
    expect(limiter.hit('a').allowed).to.equal(true);
    expect(limiter.hit('a').allowed).to.equal(false);
  });

  it('is a sliding window, not a fixed one: a burst at a boundary is not doubled', () => {
    let now = 59_000;
    const limiter = new SlidingWindowLimiter({ limit: 2, windowMs: 60_000, now: () => now });
    expect(limiter.hit('a').allowed).to.equal(true);
    expect(limiter.hit('a').allowed).to.equal(true);
    now = 61_000; // a fixed window would have reset at 60s
    expect(limiter.hit('a').allowed).to.equal(false);
  });

  it('keeps clients apart', () => {
    const limiter = new SlidingWindowLimiter({ limit: 1, windowMs: 1000, now: () => 0 });
    expect(limiter.hit('a').allowed).to.equal(true);
    expect(limiter.hit('b').allowed).to.equal(true);
    expect(limiter.hit('a').allowed).to.equal(false);
  });

  it('bounds memory: old clients are evicted beyond maxBytes', () => {
    const limiter = new SlidingWindowLimiter({
      limit: 10,
      windowMs: 60_000,
      now: () => 0,
      maxBytes: 10 * 1024,
    });
    for (let i = 0; i < 10_000; i += 1) limiter.hit(`10.0.${i >> 8}.${i & 255}`);
    expect(limiter.trackedClients).to.be.below(100);
  });

  it('uses bounded buckets for very large limits and still enforces them', () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter({ limit: 10_000, windowMs: 1000, now: () => now });
    for (let i = 0; i < 10_000; i += 1) expect(limiter.hit('a').allowed).to.equal(true);
    const refused = limiter.hit('a');
    expect(refused.allowed).to.equal(false);
    expect(refused.retryAfterMs).to.be.greaterThan(0).and.at.most(1000);
    now += 1000 + 10;
    expect(limiter.hit('a').allowed).to.equal(true);
  });
});

describe('AuthLockout', () => {
  const options = { windowSeconds: 60, threshold: 3, durationSeconds: 300 };

  it('locks a client out after `threshold` failures within the window', () => {
    let now = 0;
    const lockout = new AuthLockout({ ...options, now: () => now });
    expect(lockout.recordFailure('ip')).to.equal(0);
    expect(lockout.recordFailure('ip')).to.equal(0);
    expect(lockout.recordFailure('ip')).to.equal(300);
    now += 100_500;
    expect(lockout.lockedFor('ip')).to.be.closeTo(199.5, 0.001);
    now += 200_000;
    expect(lockout.lockedFor('ip')).to.equal(0);
  });

  it('forgets failures older than the window', () => {
    let now = 0;
    const lockout = new AuthLockout({ ...options, now: () => now });
    lockout.recordFailure('ip');
    lockout.recordFailure('ip');
    now += 61_000;
    expect(lockout.recordFailure('ip')).to.equal(0);
    expect(lockout.lockedFor('ip')).to.equal(0);
  });

  it('clears a client on success', () => {
    const lockout = new AuthLockout({ ...options, now: () => 0 });
    lockout.recordFailure('ip');
    lockout.recordFailure('ip');
    lockout.recordSuccess('ip');
    expect(lockout.recordFailure('ip')).to.equal(0);
  });
});

describe('constantTimeEqual', () => {
  it('compares byte-wise, including non-ASCII and different lengths', () => {
    expect(constantTimeEqual('s3cret', 's3cret')).to.equal(true);
    expect(constantTimeEqual('s3cret', 's3cre')).to.equal(false);
    expect(constantTimeEqual('ключ', 'ключ')).to.equal(true);
    expect(constantTimeEqual('\u00ff\u00fe', 's3cret')).to.equal(false);
    expect(constantTimeEqual('', 's3cret')).to.equal(false);
  });
});
