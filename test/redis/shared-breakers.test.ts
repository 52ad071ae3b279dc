/**
 * LLM circuit states shared through Redis: a model's circuit opened by failures on one
 * instance is open on the other, and closes there when the first one's trial succeeds.
 */
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { BreakerTransition } from '../../src/llm/circuit-breaker.js';
import { createLlmRouter, type LlmRouter } from '../../src/llm/router.js';
import type { LlmRequest, Provider } from '../../src/llm/types.js';
import { createSilentLogger } from '../../src/log.js';
import { createScaleKeys } from '../../src/scale/keys.js';
import { openRedis } from '../../src/scale/redis-connection.js';
import { createSharedBreakers, type SharedBreakers } from '../../src/scale/shared-breakers.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

/** A provider whose calls fail while `failing` is set. */
function flakyProvider(state: { failing: boolean }): Provider {
  return {
    name: 'flaky',
    chat: () =>
      state.failing
        ? Promise.reject(new Error('upstream down'))
        : Promise.resolve({
            text: 'ok',
            model: 'm1',
            usage: { input: 1, output: 1, total: 2 },
            finishReason: 'stop',
            toolCalls: [],
          } as never),
    listModels: () => Promise.resolve(['m1']),
  };
}

const request = (): LlmRequest => ({
  tier: 2,
  system: 's',
  prompt: 'p',
  signal: new AbortController().signal,
});

describe('scale-out: LLM circuit breakers shared through Redis', () => {
  let server: TestRedis;
  const connections: Redis[] = [];
  const sharings: SharedBreakers[] = [];
  let now = 1_000_000;

  before(async () => {
    server = await startTestRedis();
  });
  after(async () => {
    for (const sharing of sharings) sharing.close();
    for (const connection of connections) connection.disconnect();
    await server.stop();
  });

  /** A router of one instance, and a promise per transition it adopts from the others. */
  function instance(id: string, state: { failing: boolean }) {
    const redis = openRedis({ url: server.url, logger: createSilentLogger(), name: id });
    connections.push(redis);
    const sharing = createSharedBreakers({
      url: server.url,
      redis,
      keys: createScaleKeys('brk'),
      instanceId: id,
      logger: createSilentLogger(),
    });
    sharings.push(sharing);
    const adopted: { model: string; transition: BreakerTransition }[] = [];
    const waiters: (() => void)[] = [];
    sharing.subscribe((model, transition) => {
      adopted.push({ model, transition });
      for (const wake of waiters.splice(0)) wake();
    });
    const router: LlmRouter = createLlmRouter({
      providers: { get: () => flakyProvider(state), missing: () => undefined },
      chains: { '2': ['flaky:m1'] },
      breakerThreshold: 2,
      breakerCooldownMs: 1_000,
      now: () => now,
      breakerSharing: sharing,
    });
    const adoptedState = (state: BreakerTransition['state']): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (adopted.some((entry) => entry.transition.state === state)) resolve();
          else waiters.push(check);
        };
        check();
      });
    return { router, adoptedState, subscribed: sharing.subscribed };
  }

  it('opens the circuit on B when A sees the failures, and closes it when A recovers', async () => {
    const state = { failing: true };
    const a = instance('a', state);
    const b = instance('b', state);
    await Promise.all([a.subscribed, b.subscribed]);
    for (let i = 0; i < 2; i += 1) await a.router.complete(request()).catch(() => undefined);
    expect(a.router.breakerState('flaky:m1')).to.equal('open');
    await b.adoptedState('open');
    expect(b.router.breakerState('flaky:m1')).to.equal('open');
    const refused = await b.router.complete(request()).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(refused).to.match(/circuit open/);

    now += 1_000;
    state.failing = false;
    expect(b.router.breakerState('flaky:m1')).to.equal('half_open');
    await a.router.complete(request());
    expect(a.router.breakerState('flaky:m1')).to.equal('closed');
    await b.adoptedState('closed');
    expect(b.router.breakerState('flaky:m1')).to.equal('closed');
  });
});
