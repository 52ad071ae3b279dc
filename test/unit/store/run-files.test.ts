import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StepOutcome } from '../../../machines/engine-contract.js';
import type { RunRecord } from '../../../src/generated/run-record.js';
import { INTERRUPTED, runFileName, writeRunFile } from '../../../src/store/run-files.js';
import { recoverInterruptedRuns } from '../../../src/store/startup-recovery.js';
import { finishedRunRecord, startedRunRecord, successRate } from '../../../src/store/run-record.js';
import { compileWorkflow } from '../../../src/workflow/compile.js';
import { removeDir, tempDir, validateRecord } from '../../conformance/helpers.js';

const workflow = compileWorkflow({
  name: 'wf',
  steps: [
    { name: 'a', agent: 'tier0_echo' },
    { name: 'b', agent: 'tier2_reviewer', depends_on: ['a'] },
    { name: 'c', agent: 'tier0_echo', when: '${false}' },
  ],
});
const start = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
const base = {
  runId: 'run_1',
  workflow,
  adapter: 'native' as const,
  inputs: { x: 1 },
  startTime: start,
  extra: {},
};
const outcome = (status: StepOutcome['status'], extra: Partial<StepOutcome> = {}): StepOutcome => ({
  status,
  input: { i: 1 },
  output: status === 'success' ? { ok: true } : null,
  error: status === 'failed' ? 'boom' : null,
  skipReason: status === 'skipped' ? 'condition false' : null,
  modelUsed: null,
  tokensUsed: null,
  attempts: status === 'skipped' ? 0 : 2,
  iterations: 1,
  startTime: status === 'skipped' ? null : start + 10,
  endTime: start + 30,
  ...extra,
});

describe('run files', () => {
  let dir: string;
  beforeEach(async () => (dir = await tempDir('agentic-runs-')));
  afterEach(() => removeDir(dir));

  it('names files <UTC start>_<workflow>_<run_id>.json', () => {
    expect(runFileName(start, 'wf', 'run_1')).to.equal('20250102T030405678Z_wf_run_1.json');
  });

  it('builds a schema-valid started record with every step pending', () => {
    const record = startedRunRecord(base);
    expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
    expect(record).to.include({
      status: 'running',
      step_count: 3,
      end_time: null,
      start_time: '2025-01-02T03:04:05.678Z',
    });
    expect(record.steps.map((s) => s.status)).to.deep.equal(['pending', 'pending', 'pending']);
  });

  it('builds a schema-valid finished record: durations, retries, skip reasons, counts', () => {
    const record = finishedRunRecord(base, {
      status: 'failed',
      error: "step 'b' failed: boom",
      finalOutput: { r: 1 },
      endTime: start + 50,
      outcomes: [outcome('success'), outcome('failed'), outcome('skipped')],
    });
    expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
    expect(record).to.include({
      status: 'failed',
      failed_step_count: 1,
      total_duration_ms: 50,
      success_rate: 50,
    });
    expect(record.steps[0]).to.deep.equal({
      step_name: 'a',
      status: 'success',
      agent: 'tier0_echo',
      tier: '0',
      model_used: null,
      tokens_used: null,
      cost_usd: 0,
      duration_ms: 20,
      retry_count: 1,
      input: { i: 1 },
      output: { ok: true },
      error: null,
      start_time: '2025-01-02T03:04:05.688Z',
      end_time: '2025-01-02T03:04:05.708Z',
      metadata: { attempts: 2, iterations: 1 },
    });
    expect(record.steps[1]).to.include({ tier: '2', error: 'boom' });
    expect(record.steps[2]).to.include({ duration_ms: 0, start_time: null });
    expect(record.steps[2]!.metadata).to.deep.equal({
      attempts: 0,
      iterations: 1,
      skip_reason: 'condition false',
    });
  });

  it('computes success_rate as a percentage, leaving out steps skipped by their condition', () => {
    expect(successRate([outcome('success'), outcome('skipped')])).to.equal(100);
    expect(successRate([outcome('success'), outcome('failed'), outcome('failed')])).to.equal(33.33);
    expect(
      successRate([outcome('skipped', { skipReason: 'dependency failed: a' }), outcome('success')]),
    ).to.equal(50);
    expect(successRate([])).to.equal(100);
  });

  it('writes atomically and marks runs left running as failed/interrupted at start-up', async () => {
    const running = startedRunRecord(base);
    running.steps[0] = { ...running.steps[0]!, status: 'running' };
    const done: RunRecord = { ...startedRunRecord({ ...base, runId: 'run_2' }), status: 'success' };
    await writeRunFile(dir, 'a.json', running);
    await writeRunFile(dir, 'b.json', done);
    await writeFile(join(dir, 'junk.json'), '{not json');
    expect(await recoverInterruptedRuns(dir, start + 1000)).to.deep.equal(['a.json']);
    const recovered = JSON.parse(await readFile(join(dir, 'a.json'), 'utf8')) as RunRecord;
    expect(validateRecord(recovered), JSON.stringify(validateRecord.errors)).to.equal(true);
    expect(recovered).to.include({
      status: 'failed',
      error: INTERRUPTED,
      total_duration_ms: 1000,
      failed_step_count: 1,
    });
    expect(recovered.steps.map((s) => s.status)).to.deep.equal(['failed', 'skipped', 'skipped']);
    expect(JSON.parse(await readFile(join(dir, 'b.json'), 'utf8'))).to.deep.equal(done);
    expect(await recoverInterruptedRuns(dir)).to.deep.equal([]);
    expect(await recoverInterruptedRuns(join(dir, 'missing'))).to.deep.equal([]);
  });
});
