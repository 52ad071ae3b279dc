import { expect } from 'chai';
import {
  MAX_RUN_ID_PREFIX,
  assertRunId,
  createRunIdGenerator,
  runIdPrefix,
} from '../../../src/engine/run-id.js';

const NOW = Date.UTC(2026, 10, 25, 3, 0, 0, 0);

/** What the Python service's web UI does until `workflow_start` arrives. */
function guessedWorkflow(runId: string): string {
  return runId.slice(0, runId.lastIndexOf('-'));
}

describe('run ids', () => {
  it('starts with the workflow name, so clients guess the workflow from the text before the last -', () => {
    const next = createRunIdGenerator();
    for (const name of ['conditional_branching', 'code-review', 'a', 'x_-_y']) {
      const id = next(name, NOW);
      expect(id).to.match(/^[A-Za-z0-9_-]{1,128}$/);
      expect(guessedWorkflow(id)).to.equal(name);
      expect(id.slice(name.length + 1)).to.match(/^[a-z0-9]{23}$/);
    }
  });

  it('carries the start time in base 36 then 64 random bits: unique, sorted by time per workflow', () => {
    const next = createRunIdGenerator();
    const ids = Array.from({ length: 300 }, (_, i) => next('wf', NOW + i));
    expect(new Set(ids).size).to.equal(300);
    expect([...ids].sort()).to.deep.equal(ids);
    const suffix = ids[0]!.slice(3);
    expect(suffix.slice(0, 9)).to.equal(NOW.toString(36).padStart(9, '0'));
    // Same instant: only the random part differs, and it is not constant.
    const same = new Set(Array.from({ length: 50 }, () => next('wf', NOW).slice(12)));
    expect(same.size).to.equal(50);
  });

  it('replaces characters not allowed in run ids and cuts long names to stay within 128', () => {
    const next = createRunIdGenerator();
    expect(guessedWorkflow(next('my.flow.v2', NOW))).to.equal('my_flow_v2');
    const long = 'w'.repeat(300);
    const id = next(long, NOW);
    expect(id).to.have.length(128);
    expect(id).to.match(/^[A-Za-z0-9_-]{1,128}$/);
    expect(guessedWorkflow(id)).to.equal('w'.repeat(MAX_RUN_ID_PREFIX));
    expect(runIdPrefix('')).to.equal('run');
    expect(() => assertRunId(id)).to.not.throw();
  });
});
