import { expect } from 'chai';
import { join } from 'node:path';
import {
  AppError,
  ERROR_CODES,
  RunsBudgetSpentError,
  createRuntime,
  type Runtime,
  type WorkflowEvent,
} from '../../../src/index.js';
import { jsonSize } from '../../../src/workflow/size-bounds.js';
import { removeDir, tempDir } from '../../conformance/helpers.js';
import { rejection } from '../../support/rejection.js';

/** `steps` echo steps, each rendering `${inputs.t}` `repeat` times, then a sleep of `sleepMs`. */
function amplifier(name: string, steps: number, repeat: number, sleepMs?: number): string {
  let yaml = `name: ${name}\ninputs:\n  t: { type: string }\nsteps:\n`;
  for (let i = 0; i < steps; i++) {
    yaml += `  - name: s${i}\n    agent: tier0_echo\n    inputs:\n      x: "${'${inputs.t}'.repeat(repeat)}"\n`;
  }
  if (sleepMs !== undefined) {
    yaml += `  - name: wait\n    agent: tier0_sleep\n    depends_on: [s${steps - 1}]\n    inputs: { ms: ${sleepMs} }\n`;
  }
  return yaml;
}

interface HeldStep {
  step_name: string;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
}

describe('createRuntime run byte budgets (engine/held-bytes.ts)', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-held-');
  });
  afterEach(async () => {
    for (const runId of runtime?.activeRuns() ?? []) runtime?.cancel(runId);
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  for (const adapter of ['native', 'graph'] as const) {
    it(`keeps a run's step inputs and outputs within limits.maxRunBytes as truncation markers, listed in extra.warnings (${adapter})`, async () => {
      const bound = 64 * 1024;
      const rt = (runtime = createRuntime({
        runsDir: join(dir, 'runs'),
        workflowsDir: dir,
        defaultAdapter: adapter,
        maxConcurrency: 1,
        limits: { maxRunBytes: bound },
      }));
      const events: WorkflowEvent[] = [];
      rt.subscribe((event) => events.push(event));
      // 10 steps of 10 KB in and 10 KB out: 200 KB held without the budget.
      const record = await rt.run({
        workflow: amplifier('amp', 10, 10),
        input: { t: 'y'.repeat(1000) },
      });
      expect(record.status).to.equal('success');
      const steps = record.steps as unknown as HeldStep[];
      const held = steps.reduce(
        (sum, step) => sum + jsonSize(step.input, 1e9) + jsonSize(step.output, 1e9),
        0,
      );
      expect(held).to.be.at.most(bound + 20 * 600);
      // The first steps are whole; the later ones hold markers, and the record says so.
      expect(steps[0]!.output).to.deep.equal({ x: 'y'.repeat(10_000) });
      const last = steps[9]!;
      expect(JSON.stringify(last.input)).to.contain('"__truncated__":true');
      expect(JSON.stringify(last.output)).to.contain('"__truncated__":true');
      const warnings = (record.extra as { warnings: string[] }).warnings;
      // (Its output is the echo of the markers it was given: small, kept as it is.)
      expect(warnings).to.include(
        "steps.s9.input entries x truncated: the run's step inputs and outputs exceeded 65536 bytes (AGENTIC_MAX_RUN_BYTES)",
      );
      // Small values past the budget are kept whole (a marker would be bigger).
      const small = await rt.run({
        workflow: `${amplifier('amp2', 8, 10)}  - name: tail\n    agent: tier0_echo\n    inputs: { n: 7 }\n`,
        input: { t: 'y'.repeat(1000) },
      });
      expect(small.steps.at(-1)).to.deep.include({ input: { n: 7 }, output: { n: 7 } });
      // The events carry what the run holds, not the full values.
      const ends = events.filter((e) => e.type === 'step_end' && e.step === 's9');
      expect(ends).to.have.length(1);
      expect(JSON.stringify((ends[0] as { output: unknown }).output)).to.contain(
        '"__truncated__":true',
      );
    });
  }

  it('refuses new runs with RunsBudgetSpentError (503, Retry-After) while the active runs hold the budget, and admits them again once they end', async () => {
    const rt = (runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: dir,
      maxRunsHeldBytes: 100_000,
      limits: { maxRunBytes: 64 * 1024 },
    }));
    const big = amplifier('big', 1, 30, 60_000);
    const filled = new Promise<void>((resolve) =>
      rt.subscribe((event) => {
        if (event.type === 'step_end' && event.step === 's0') resolve();
      }),
    );
    // 30 KB in and out, then a long sleep: the run holds 60 KB until it ends.
    const holder = await rt.start({ workflow: big, input: { t: 'y'.repeat(1000) } });
    await filled;
    const refused = await rejection(rt.run({ workflow: big, input: { t: 'small' } }));
    expect(refused).to.be.instanceOf(RunsBudgetSpentError);
    expect(refused).to.be.instanceOf(AppError);
    const error = refused as RunsBudgetSpentError;
    expect([error.code, error.status, error.expose, error.retryAfterSeconds]).to.deep.equal([
      ERROR_CODES.RUNS_BUDGET_SPENT,
      503,
      true,
      5,
    ]);
    expect(error.headers).to.deep.equal({ 'Retry-After': '5' });
    expect(error.message).to.match(/^the active runs hold \d+ bytes .*AGENTIC_MAX_RUNS_HELD_BYTES/);
    expect(rt.activeRuns()).to.deep.equal([holder.runId]);

    rt.cancel(holder.runId);
    await holder.done;
    expect(
      (await rt.run({ workflow: amplifier('small', 1, 1), input: { t: 'z' } })).status,
    ).to.equal('success');
  });

  it('fails a step of an admitted run whose input would take the active runs over the budget, with a clear error', async () => {
    const rt = (runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: dir,
      maxRunsHeldBytes: 100_000,
      limits: { maxRunBytes: 64 * 1024 },
    }));
    // Both admitted while nothing is held; each step takes 60 KB in (and out): one cannot fit.
    const workflow = amplifier('pair', 1, 60, 60_000);
    const [a, b] = await Promise.all([
      rt.start({ workflow, input: { t: 'y'.repeat(1000) } }),
      rt.start({ workflow, input: { t: 'y'.repeat(1000) } }),
    ]);
    const first = await Promise.race([a.done, b.done]);
    expect(first.status).to.equal('failed');
    expect(first.steps[0]).to.include({ status: 'failed' });
    expect(first.steps[0]!.error).to.match(
      /^inputs: not run: the active runs hold \d+ bytes of step inputs and outputs, the most this service allows \(AGENTIC_MAX_RUNS_HELD_BYTES: 100000\); try again later$/,
    );
  });
});
