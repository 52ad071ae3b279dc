import { expect } from 'chai';
import { replayFromRecord } from '../../../src/events/replay-from-record.js';
import type { RunRecord, StepRecord } from '../../../src/generated/run-record.js';
import { sampleRecord } from './hub-fixtures.js';

/** Type, step and status of each rebuilt event. */
const shape = (record: RunRecord): string[] =>
  replayFromRecord(record).map((event) => {
    const step = 'step' in event ? `:${event.step}` : '';
    const status = 'status' in event ? `=${event.status}` : '';
    return `${event.type}${step}${status}`;
  });

/** Two steps that ran in parallel: `a` (first in the file) started first and ended last. */
function parallelRecord(seqs: Partial<Record<'a' | 'b', Partial<StepRecord>>>): RunRecord {
  const record = sampleRecord('par');
  const [first] = record.steps as [StepRecord];
  record.steps = [
    { ...first, step_name: 'a', ...seqs.a },
    { ...first, step_name: 'b', status: 'failed', error: 'boom', ...seqs.b },
  ];
  record.status = 'failed';
  return record;
}

describe('replayFromRecord: order of the steps (issue 24.8)', () => {
  it('places each step start and end at its recorded live seq', () => {
    const record = parallelRecord({
      a: { start_seq: 1, end_seq: 5 },
      b: { start_seq: 2, end_seq: 4 },
    });
    expect(shape(record)).to.deep.equal([
      'workflow_start',
      'step_start:a',
      'step_start:b',
      'step_error:b=failed',
      'step_end:b=failed',
      'step_end:a=success',
      'workflow_end=failed',
    ]);
    expect(replayFromRecord(record).map((event) => event.seq)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
  });

  it('keeps file order for a file without the seqs, or with only some of them', () => {
    const fileOrder = [
      'workflow_start',
      'step_start:a',
      'step_end:a=success',
      'step_start:b',
      'step_error:b=failed',
      'step_end:b=failed',
      'workflow_end=failed',
    ];
    expect(shape(parallelRecord({}))).to.deep.equal(fileOrder);
    expect(
      shape(parallelRecord({ a: { start_seq: 1, end_seq: 5 }, b: { start_seq: 2 } })),
    ).to.deep.equal(fileOrder);
  });
});
