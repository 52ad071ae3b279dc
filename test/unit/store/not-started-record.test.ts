import { expect } from 'chai';
import { replayFromRecord } from '../../../src/events/replay-from-record.js';
import { notStartedRecord, workflowNameOf } from '../../../src/store/not-started-record.js';
import { validateRecord } from '../../conformance/helpers.js';

describe('notStartedRecord', () => {
  const now = Date.parse('2026-01-02T03:04:05.678Z');

  it('builds a schema-valid failed record with no step and the reason', () => {
    const record = notStartedRecord(
      { runId: 'r-1', workflowName: 'gone', adapter: 'graph', inputs: { n: 1 } },
      "workflow 'gone' not found",
      now,
    );
    expect(validateRecord(record), JSON.stringify(validateRecord.errors)).to.equal(true);
    expect(record).to.deep.equal({
      run_id: 'r-1',
      workflow_name: 'gone',
      adapter: 'graph',
      status: 'failed',
      inputs: { n: 1 },
      steps: [],
      final_output: null,
      success_rate: 0,
      total_duration_ms: 0,
      step_count: 0,
      failed_step_count: 0,
      start_time: '2026-01-02T03:04:05.678Z',
      end_time: '2026-01-02T03:04:05.678Z',
      error: "could not start: workflow 'gone' not found",
      extra: {},
    });
  });

  it('replays as workflow_start then a failed workflow_end carrying the reason', () => {
    const record = notStartedRecord(
      { runId: 'r-2', workflowName: 'gone', adapter: 'native', inputs: {} },
      'the runs directory is not writable',
      now,
    );
    const events = replayFromRecord(record, 'f.json');
    expect(events.map((event) => [event.type, event.seq])).to.deep.equal([
      ['workflow_start', 0],
      ['workflow_end', 1],
    ]);
    expect(events[1]).to.include({ status: 'failed' });
  });

  it('names the run file by the reference stem, whatever path or characters it has', () => {
    expect(workflowNameOf('review')).to.equal('review');
    expect(workflowNameOf('team/review.yaml')).to.equal('review');
    expect(workflowNameOf('odd name!.yml')).to.equal('odd_name_');
    expect(workflowNameOf('.yaml')).to.equal('workflow');
  });
});
