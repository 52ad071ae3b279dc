import { expect } from 'chai';
import {
  candidateText,
  hardGates,
  measure,
  similarity,
  type RunContext,
} from '../../../src/eval/criteria.js';
import { workflowRubric } from '../../../src/workflow/rubric.js';
import { ValidationError } from '../../../src/errors.js';
import type { RunRecord, StepRecord } from '../../../src/generated/run-record.js';

const step = (name: string, status: StepRecord['status'], retries = 0) =>
  ({ step_name: name, status, retry_count: retries }) as unknown as StepRecord;

function context(overrides: Partial<RunRecord>, critical: string[] = []): RunContext {
  const record = {
    status: 'success',
    success_rate: 50,
    total_duration_ms: 1500,
    final_output: { answer: 'Use a parameterized query', notes: '' },
    steps: [step('a', 'success', 2), step('b', 'failed', 1)],
    ...overrides,
  } as unknown as RunRecord;
  return {
    record,
    workflow: {
      outputNames: ['answer', 'notes', 'extra'],
      optionalOutputs: ['extra'],
      document: {
        name: 'wf',
        steps: [
          { name: 'a', agent: 'x', critical: critical.includes('a') },
          { name: 'b', agent: 'x', critical: critical.includes('b') },
        ],
      },
    },
    expected: 'use a PARAMETERIZED query!',
  };
}

describe('eval criteria computed from a run', () => {
  it('measures status, step success rate, retries, duration and output completeness', () => {
    const c = context({});
    expect(measure('status_success', c).value).to.equal(1);
    expect(measure('step_success_rate', c).value).to.equal(0.5);
    expect(measure('retries', c).value).to.equal(3);
    expect(measure('duration_ms', c).value).to.equal(1500);
    // answer present, notes empty, extra optional: 1 of 2
    expect(measure('output_completeness', c).value).to.equal(0.5);
  });

  it('measures similarity to the expected output ignoring case and punctuation, n/a without one', () => {
    expect(measure('expected_similarity', context({})).value).to.equal(1);
    expect(similarity('alpha beta', 'beta gamma')).to.equal(0.5);
    expect(measure('expected_similarity', { ...context({}), expected: undefined })).to.deep.equal({
      value: null,
      detail: 'the sample has no expected output',
    });
    expect(candidateText({ a: 'x', b: [1, { c: 'y' }], d: null })).to.equal('x\n1\ny');
  });

  it('gates: outputs present, status success, critical steps (every step when none is marked)', () => {
    expect(hardGates(context({}))).to.deep.equal({
      required_outputs_present: false,
      overall_status_success: true,
      no_critical_step_failures: false,
    });
    // Only a is critical and it succeeded: b's failure does not fail the gate.
    expect(hardGates(context({ final_output: { answer: 'x', notes: 'y' } }, ['a']))).to.deep.equal({
      required_outputs_present: true,
      overall_status_success: true,
      no_critical_step_failures: true,
    });
    expect(hardGates(context({ status: 'failed' }, ['b'])).no_critical_step_failures).to.equal(
      false,
    );
  });

  it("reads a workflow's own rubric from its evaluation block and validates it", () => {
    const own = workflowRubric('wf', {
      enabled: true,
      dataset: 'question_answering',
      pass_threshold: 80,
      criteria: [
        { id: 'ok', metric: 'status_success', weight: 0.6 },
        { id: 'fast', metric: 'duration_ms', weight: 0.4, thresholds: { good: 1000, bad: 2000 } },
      ],
    });
    expect(own).to.include({ id: 'wf.evaluation', passThreshold: 80 });
    expect(workflowRubric('wf', { rubric: 'default' })).to.equal(undefined);
    expect(() =>
      workflowRubric('wf', { criteria: [{ id: 'ok', metric: 'status_success', weight: 0.6 }] }),
    ).to.throw(ValidationError, /sum to 0.6/);
  });
});
