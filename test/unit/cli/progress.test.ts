import { expect } from 'chai';
import { progressLine } from '../../../src/cli/progress.js';

describe('agentic run progress lines', () => {
  const base = { run_id: 'p', timestamp: '2026-01-01T00:00:00.000Z', seq: 3 };

  it("names a child run's step (a sub-workflow step's) under its parent step", () => {
    expect(
      progressLine({
        ...base,
        type: 'step_start',
        step: 'process',
        agent: 'tier0_process',
        parent_step: 'summarise',
        child_run_id: 'p-summarise-1',
      }),
    ).to.equal('  > summarise/process [tier0_process]');
    expect(
      progressLine({
        ...base,
        type: 'step_end',
        step: 'summarise',
        status: 'success',
        duration_ms: 5,
      }),
    ).to.equal('  ok summarise 5 ms');
  });
});
