import { expect } from 'chai';
import { join } from 'node:path';
import {
  AppError,
  DEFAULT_MAX_ACTIVE_RUNS,
  ERROR_CODES,
  RateLimitedError,
  TooManyActiveRunsError,
  createRuntime,
  resolveRuntimeOptions,
  type Runtime,
} from '../../../src/index.js';
import { removeDir, tempDir } from '../../conformance/helpers.js';
import { rejection } from '../../support/rejection.js';

const SLEEPY = 'name: sleepy\nsteps:\n  - { name: s, agent: tier0_sleep, inputs: { ms: 60000 } }\n';
const ECHO = 'name: echo\nsteps:\n  - { name: e, agent: tier0_echo, inputs: { v: 1 } }\n';

describe('createRuntime maxActiveRuns', () => {
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(async () => {
    dir = await tempDir('agentic-active-');
  });
  afterEach(async () => {
    for (const runId of runtime?.activeRuns() ?? []) runtime?.cancel(runId);
    await runtime?.shutdown({ graceMs: 1000 });
    runtime = undefined;
    await removeDir(dir);
  });

  it('defaults to DEFAULT_MAX_ACTIVE_RUNS (100) and refuses values below 1', () => {
    expect(DEFAULT_MAX_ACTIVE_RUNS).to.equal(100);
    expect(resolveRuntimeOptions({ workflowsDir: dir }).maxActiveRuns).to.equal(100);
    expect(() => resolveRuntimeOptions({ workflowsDir: dir, maxActiveRuns: 0 })).to.throw(
      AppError,
      'maxActiveRuns must be a positive integer',
    );
  });

  it('run() and start() beyond the limit reject with TooManyActiveRunsError and start nothing', async () => {
    const rt = (runtime = createRuntime({
      runsDir: join(dir, 'runs'),
      workflowsDir: dir,
      maxActiveRuns: 1,
    }));
    const held = await rt.start({ workflow: SLEEPY });
    const refused = await rejection(rt.run({ workflow: ECHO, runId: 'refused' }));
    expect(refused).to.be.instanceOf(TooManyActiveRunsError);
    expect(refused).to.be.instanceOf(RateLimitedError);
    const error = refused as TooManyActiveRunsError;
    expect([error.code, error.status, error.retryAfterSeconds, error.limit]).to.deep.equal([
      ERROR_CODES.TOO_MANY_ACTIVE_RUNS,
      429,
      5,
      1,
    ]);
    expect(error.headers).to.deep.equal({ 'Retry-After': '5' });
    expect(await rejection(rt.start({ workflow: ECHO }))).to.be.instanceOf(TooManyActiveRunsError);
    expect(rt.activeRuns()).to.deep.equal([held.runId]);

    rt.cancel(held.runId);
    await held.done;
    expect((await rt.run({ workflow: ECHO })).status).to.equal('success');
  });
});
