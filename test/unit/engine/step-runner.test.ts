import { expect } from 'chai';
import type { Agent } from '../../../src/agents/types.js';
import { createRetryDelay } from '../../../src/engine/retry-policy.js';
import { createAttemptRunner } from '../../../src/engine/step-runner.js';
import type { EvalScope } from '../../../src/workflow/types.js';
import { workflowOf } from '../../machines/fixtures.js';
import { TestClock } from '../../fixtures/test-clock.js';

const scope: EvalScope = { inputs: {}, steps: {}, context: {} };

describe('createAttemptRunner', () => {
  const run = (
    agent: Agent | undefined,
    step = workflowOf([[]]).steps[0]!,
    signal = new AbortController().signal,
    clock = new TestClock(),
  ) =>
    createAttemptRunner({ runId: 'r', clock, agents: () => agent })({
      step,
      input: { a: 1 },
      scope,
      attempt: 1,
      signal,
    });

  it('returns the agent output with model and tokens', async () => {
    const result = await run(({ input }) =>
      Promise.resolve({
        output: input,
        modelUsed: 'm',
        tokensUsed: { input: 3, output: 0, total: 3 },
      }),
    );
    expect(result).to.deep.equal({
      ok: true,
      output: { a: 1 },
      error: null,
      modelUsed: 'm',
      tokensUsed: { input: 3, output: 0, total: 3 },
      iterations: 1,
    });
  });

  it('turns a synchronous throw, a rejection and an unknown agent into failed results', async () => {
    expect(
      (
        await run(() => {
          throw new Error('sync');
        })
      ).error,
    ).to.equal('sync');
    expect((await run(() => Promise.reject(new Error('async')))).error).to.equal('async');
    expect(await run(undefined)).to.include({ ok: false, error: "unknown agent 'tier0_echo'" });
  });

  it('fails with "step timed out after Ns" and aborts the agent signal', async () => {
    const clock = new TestClock();
    let seen: AbortSignal | undefined;
    const step = workflowOf([[]], () => ({ timeoutSeconds: 1.5 })).steps[0]!;
    const pending = run(
      ({ signal }) => {
        seen = signal;
        return new Promise(() => {});
      },
      step,
      new AbortController().signal,
      clock,
    );
    clock.increment(1500);
    expect(await pending).to.include({ ok: false, error: 'step timed out after 1.5s' });
    expect(seen!.aborted).to.equal(true);
    expect(clock.pending()).to.equal(0);
  });

  it('gives a step without timeout_seconds the default step timeout', async () => {
    const clock = new TestClock();
    let seen: AbortSignal | undefined;
    const step = workflowOf([[]]).steps[0]!;
    expect(step.timeoutSeconds).to.equal(undefined);
    const pending = createAttemptRunner({
      runId: 'r',
      clock,
      agents:
        () =>
        ({ signal }) => {
          seen = signal;
          return new Promise(() => {});
        },
      defaultStepTimeoutMs: 2500,
    })({ step, input: {}, scope, attempt: 1, signal: new AbortController().signal });
    clock.increment(2499);
    expect(seen!.aborted).to.equal(false);
    clock.increment(1);
    expect(await pending).to.include({ ok: false, error: 'step timed out after 2.5s' });
    expect(seen!.aborted).to.equal(true);
    expect(clock.pending()).to.equal(0);
  });

  it("a step's own timeout_seconds wins over the default step timeout", async () => {
    const clock = new TestClock();
    const step = workflowOf([[]], () => ({ timeoutSeconds: 1 })).steps[0]!;
    const pending = createAttemptRunner({
      runId: 'r',
      clock,
      agents: () => () => new Promise(() => {}),
      defaultStepTimeoutMs: 60_000,
    })({ step, input: {}, scope, attempt: 1, signal: new AbortController().signal });
    clock.increment(1000);
    expect(await pending).to.include({ ok: false, error: 'step timed out after 1s' });
    expect(clock.pending()).to.equal(0);
  });

  it('ends an attempt whose agent never reads its signal when the run is aborted, its step timer cleared', async () => {
    // Before, only an agent that read its signal was raced against the run's abort: a cancelled
    // run's attempt (and its end) waited for the default step timeout, 30 minutes.
    const clock = new TestClock();
    const controller = new AbortController();
    const pending = createAttemptRunner({
      runId: 'r',
      clock,
      agents: () => () => new Promise(() => {}),
      defaultStepTimeoutMs: 60_000,
    })({
      step: workflowOf([[]]).steps[0]!,
      input: {},
      scope,
      attempt: 1,
      signal: controller.signal,
    });
    controller.abort(new Error('cancelled'));
    expect(await pending).to.include({ ok: false, error: 'cancelled' });
    expect(clock.pending()).to.equal(0);
  });

  it('runs more than 10 guarded steps of one run at once without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const runner = createAttemptRunner({
        runId: 'r',
        clock: new TestClock(),
        agents: () => () => new Promise(() => {}),
        defaultStepTimeoutMs: 60_000,
      });
      const step = workflowOf([[]]).steps[0]!;
      const attempts = Array.from({ length: 12 }, () =>
        runner({ step, input: {}, scope, attempt: 1, signal: controller.signal }),
      );
      controller.abort(new Error('cancelled'));
      for (const attempt of attempts) expect(await attempt).to.include({ error: 'cancelled' });
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(warnings).to.deep.equal([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('clears the step timer when the agent finishes first', async () => {
    const clock = new TestClock();
    const step = workflowOf([[]], () => ({ timeoutSeconds: 5 })).steps[0]!;
    const result = await run(
      () => Promise.resolve({ output: {}, modelUsed: null, tokensUsed: null }),
      step,
      new AbortController().signal,
      clock,
    );
    expect(result.ok).to.equal(true);
    expect(clock.pending()).to.equal(0);
  });

  it('fails at once when the run signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    expect(
      await run(
        () => Promise.resolve({ output: {}, modelUsed: null, tokensUsed: null }),
        undefined,
        controller.signal,
      ),
    ).to.include({ ok: false, error: 'cancelled' });
  });

  it('loops until the condition holds, with the previous output in scope, summing tokens', async () => {
    const step = workflowOf([[]], () => ({
      loopUntil: (s: EvalScope) => (s.steps.s0?.outputs?.n as number) >= 3,
      inputs: (s: EvalScope) => ({ prev: s.steps.s0?.outputs?.n ?? 0 }),
    })).steps[0]!;
    const inputs: unknown[] = [];
    const iterations: unknown[] = [];
    const result = await createAttemptRunner({
      runId: 'r',
      clock: new TestClock(),
      agents:
        () =>
        ({ input }) => {
          inputs.push(input);
          return Promise.resolve({
            output: { n: inputs.length },
            modelUsed: 'm',
            tokensUsed: { input: 2, output: 0, total: 2 },
          });
        },
    })({
      step,
      input: { prev: 0 },
      scope,
      attempt: 1,
      signal: new AbortController().signal,
      onIteration: (i, out) => iterations.push([i, out]),
    });
    expect(inputs).to.deep.equal([{ prev: 0 }, { prev: 1 }, { prev: 2 }]);
    expect(iterations).to.deep.equal([
      [1, { n: 1 }],
      [2, { n: 2 }],
    ]);
    expect(result).to.include({ ok: true, iterations: 3 });
    expect(result.tokensUsed).to.deep.equal({ input: 6, output: 0, total: 6 });
  });

  it('stops at the default loop_max of 10', async () => {
    const step = workflowOf([[]], () => ({ loopUntil: () => false })).steps[0]!;
    const result = await run(
      () => Promise.resolve({ output: {}, modelUsed: null, tokensUsed: null }),
      step,
    );
    expect(result.iterations).to.equal(10);
  });
});

describe('createRetryDelay', () => {
  it('is full jitter under an exponential cap', () => {
    const delay = createRetryDelay({ baseMs: 100, maxMs: 1000, random: () => 0.999 });
    expect([1, 2, 3, 4, 5, 6].map(delay)).to.deep.equal([99, 199, 399, 799, 999, 999]);
    expect(createRetryDelay({ baseMs: 100, random: () => 0 })(3)).to.equal(0);
  });
});
