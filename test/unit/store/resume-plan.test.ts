import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord, StepRecord } from '../../../src/generated/run-record.js';
import { interruptedRecord } from '../../../src/store/interrupted-record.js';
import { foldJournalLines, parseJournal } from '../../../src/store/journal-recovery.js';
import { resumePlan, ResumePlanError } from '../../../src/store/resume-plan.js';
import { startedRunRecord } from '../../../src/store/run-record.js';
import {
  pinnedWorkflowPath,
  readPinnedWorkflow,
  WorkflowPins,
  workflowHash,
} from '../../../src/store/workflow-pins.js';
import { compileWorkflow } from '../../../src/workflow/index.js';

const workflow = compileWorkflow({
  name: 'four',
  steps: [
    { name: 'a', agent: 'tier0_echo' },
    { name: 'b', agent: 'tier0_echo', depends_on: ['a'] },
    { name: 'c', agent: 'tier0_echo', depends_on: ['b'] },
    { name: 'd', agent: 'tier0_echo', depends_on: ['c'] },
  ],
});

function started(): RunRecord {
  return startedRunRecord({
    runId: 'r1',
    workflow,
    adapter: 'native',
    inputs: {},
    startTime: Date.UTC(2026, 0, 1),
    extra: {},
  });
}

function finished(step: StepRecord, output: unknown): StepRecord {
  return {
    ...step,
    status: 'success',
    output,
    input: { x: 1 },
    start_time: '2026-01-01T00:00:01.000Z',
    end_time: '2026-01-01T00:00:02.000Z',
    metadata: { attempts: 1, iterations: 1 },
  };
}

describe('resumePlan', () => {
  it('seeds the finished steps and retries the one that had started, counting it', () => {
    const record = started();
    record.steps[0] = finished(record.steps[0]!, { n: 1 });
    record.steps[1] = {
      ...record.steps[1]!,
      status: 'running',
      start_time: '2026-01-01T00:00:03.000Z',
      retry_count: 1,
      metadata: { attempts: 2 },
    };
    const plan = resumePlan(record, workflow);
    expect([...plan.seed.steps.keys()]).to.deep.equal(['a']);
    expect(plan.seed.steps.get('a')).to.deep.include({
      status: 'success',
      output: { n: 1 },
      input: { x: 1 },
      attempts: 1,
      startTime: Date.UTC(2026, 0, 1, 0, 0, 1),
      endTime: Date.UTC(2026, 0, 1, 0, 0, 2),
    });
    expect([...plan.seed.attempts!]).to.deep.equal([['b', 2]]);
    expect([...plan.seed.interruptions!]).to.deep.equal([['b', 1]]);
    expect(plan.interrupted).to.deep.equal(['b']);
    expect(plan.steps[0]).to.deep.equal(record.steps[0]);
    // The next resume counts the attempt about to be made, and this interruption.
    expect(plan.steps[1]).to.deep.include({ status: 'pending', start_time: null });
    expect(plan.steps[1]!.metadata).to.deep.equal({ attempts: 3, interruptions: 1 });
    expect(plan.steps[2]!.metadata).to.deep.equal({});
  });

  it('reads a record marked interrupted the same way', () => {
    const record = started();
    record.steps[0] = finished(record.steps[0]!, { n: 1 });
    record.steps[1] = {
      ...record.steps[1]!,
      status: 'running',
      start_time: '2026-01-01T00:00:03.000Z',
    };
    const plan = resumePlan(interruptedRecord(record, Date.UTC(2026, 0, 1, 1)), workflow);
    expect([...plan.seed.steps.keys()]).to.deep.equal(['a']);
    expect([...plan.seed.attempts!]).to.deep.equal([['b', 1]]);
    expect(plan.steps.slice(2).map((s) => s.status)).to.deep.equal(['pending', 'pending']);
  });

  it('runs again a success whose whole output the record bound replaced by a marker', () => {
    const record = started();
    record.steps[0] = finished(record.steps[0]!, { __truncated__: true, bytes: 9e6, preview: 'x' });
    const plan = resumePlan(record, workflow);
    expect(plan.seed.steps.size).to.equal(0);
    expect([...plan.seed.attempts!]).to.deep.equal([['a', 1]]);
  });

  it('refuses a workflow whose steps do not match the record', () => {
    const other = compileWorkflow({ name: 'four', steps: [{ name: 'a', agent: 'tier0_echo' }] });
    expect(() => resumePlan(started(), other)).to.throw(
      ResumePlanError,
      'the run file has 4 steps, workflow four has 1',
    );
  });
});

describe('pinned workflows', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'agentic-pins-'))));
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('writes one copy per content hash, once, and reads it back', async () => {
    const writes: string[] = [];
    const pins = new WorkflowPins(dir, async (path, data) => {
      writes.push(path);
      await writeFile(path, data);
    });
    const hash = await pins.pin(workflow);
    expect(await pins.pin(workflow)).to.equal(hash);
    expect(hash).to.equal(workflowHash(workflow.document));
    expect(writes).to.deep.equal([pinnedWorkflowPath(dir, hash)]);
    expect(await readPinnedWorkflow(dir, hash)).to.deep.equal(workflow.document);
  });

  it('does not use a copy whose content is not its hash', async () => {
    const pins = new WorkflowPins(dir, (path, data) => writeFile(path, data));
    const hash = await pins.pin(workflow);
    const path = pinnedWorkflowPath(dir, hash)!;
    await writeFile(path, (await readFile(path, 'utf8')).replace('tier0_echo', 'tier0_fail'));
    expect(await readPinnedWorkflow(dir, hash)).to.equal(undefined);
    expect(await readPinnedWorkflow(dir, 'sha256:../../etc')).to.equal(undefined);
  });
});

describe('resumePlan of a map step interrupted mid-list', () => {
  const mapped = compileWorkflow({
    name: 'mapped',
    steps: [{ name: 'each', for_each: [1, 2, 3], agent: 'tier0_echo' }],
  });
  const record = (): RunRecord =>
    startedRunRecord({
      runId: 'r2',
      workflow: mapped,
      adapter: 'native',
      inputs: {},
      startTime: Date.UTC(2026, 0, 1),
      extra: {},
    });

  it("folds the journal's item lines into the running step and carries them into the new start record", () => {
    const { record: folded } = foldJournalLines(
      record(),
      parseJournal(
        [
          '{"i":0,"started":"2026-01-01T00:00:01.000Z"}',
          '{"i":0,"item":{"index":2,"attempts":1,"output":{"v":3}}}',
          '{"i":0,"item":{"index":0,"attempts":2,"output":{"v":1}}}',
          '',
        ].join('\n'),
      ),
    );
    expect(folded.steps[0]).to.deep.include({ status: 'running' });
    expect(folded.steps[0]!.metadata.finished_items).to.deep.equal([
      { index: 0, attempts: 2, output: { v: 1 } },
      { index: 2, attempts: 1, output: { v: 3 } },
    ]);
    const plan = resumePlan(folded, mapped);
    expect(plan.interrupted).to.deep.equal(['each']);
    expect(plan.steps[0]).to.deep.include({ status: 'pending' });
    expect(plan.steps[0]!.metadata).to.deep.equal({
      attempts: 2,
      interruptions: 1,
      finished_items: folded.steps[0]!.metadata.finished_items,
      items_resumed: 2,
    });

    // Interrupted again with no item further: the interruption counts.
    const again = resumePlan(
      { ...folded, steps: [{ ...plan.steps[0]!, status: 'running' }] },
      mapped,
    );
    expect(again.steps[0]!.metadata).to.deep.include({ interruptions: 2, items_resumed: 2 });
    expect(again.seed.interruptions?.get('each')).to.equal(2);
  });
});
