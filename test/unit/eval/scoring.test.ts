import { expect } from 'chai';
import { ValidationError } from '../../../src/errors.js';
import { readRubricFile } from '../../../src/eval/rubric-file.js';
import { loadRubric } from '../../../src/workflow/rubric.js';
import { gradeOf, scoreRubric } from '../../../src/eval/scoring.js';
import { join } from 'node:path';
import { packageRoot } from '../../../src/config/index.js';

const rubricData = (floorA?: number) => ({
  id: 'worked',
  name: 'Worked example',
  criteria: [
    {
      id: 'a',
      metric: 'output_completeness',
      weight: 0.5,
      ...(floorA ? { critical_floor: floorA } : {}),
    },
    { id: 'b', metric: 'judge', weight: 0.3 },
    { id: 'c', metric: 'retries', weight: 0.2, thresholds: { good: 0, bad: 4 } },
  ],
});
const allGates = {
  required_outputs_present: true,
  overall_status_success: true,
  no_critical_step_failures: true,
};
const measured = { a: { value: 0.8 }, b: { value: 4 }, c: { value: 1 } };

describe('eval scoring', () => {
  it('scores a worked example: 0.5×0.8 + 0.3×0.75 + 0.2×0.75 = 77.5, grade C, passed', () => {
    const score = scoreRubric(loadRubric(rubricData(), 'x'), measured, allGates);
    expect(
      score.criteria.map((c) => [
        c.criterion,
        c.raw_score,
        c.normalized_score,
        c.weighted_contribution,
      ]),
    ).to.deep.equal([
      ['a', 80, 0.8, 0.4],
      ['b', 75, 0.75, 0.225],
      ['c', 75, 0.75, 0.15],
    ]);
    expect(score).to.include({
      weighted_score: 77.5,
      overall_score: 77.5,
      grade: 'C',
      passed: true,
      pass_threshold: 70,
      rubric_id: 'worked',
      rubric_version: '1',
    });
    expect(score.floor_violations).to.deep.equal([]);
    expect(score.hard_gate_failures).to.deep.equal([]);
    expect(score.hard_gates).to.deep.equal(allGates);
  });

  it('caps the grade at D when a critical floor is violated', () => {
    const score = scoreRubric(loadRubric(rubricData(85), 'x'), measured, allGates);
    expect(score.floor_violations).to.deep.equal([
      { criterion: 'a', raw_score: 80, critical_floor: 85, floor: 0.85, normalized_score: 0.8 },
    ]);
    expect(score.criteria[0]?.floor_violated).to.equal(true);
    expect(score).to.include({
      weighted_score: 77.5,
      overall_score: 69,
      grade: 'D',
      passed: false,
    });
    expect(score.score_layers).to.deep.equal({
      weighted: 77.5,
      weighted_grade: 'C',
      after_floors: 69,
      after_gates: 69,
      // The reference service's layers: a is objective, b the judge, c efficiency (advisory).
      layer1_objective: 80,
      layer2_judge: 75,
      layer3_similarity: null,
      layer3_efficiency: 75,
      layer3_advisory: 75,
    });
  });

  it('grades F and fails when a hard gate fails, whatever the criteria say', () => {
    const perfect = { a: { value: 1 }, b: { value: 5 }, c: { value: 0 } };
    const score = scoreRubric(loadRubric(rubricData(), 'x'), perfect, {
      ...allGates,
      overall_status_success: false,
    });
    expect(score).to.include({ weighted_score: 100, overall_score: 59, grade: 'F', passed: false });
    expect(score.hard_gate_failures).to.deep.equal(['overall_status_success']);
    expect(score.hard_gates.overall_status_success).to.equal(false);
  });

  it('leaves a criterion that does not apply out and renormalizes the other weights', () => {
    const score = scoreRubric(
      loadRubric(rubricData(), 'x'),
      { ...measured, c: { value: null, detail: 'n/a' } },
      allGates,
    );
    // (0.5×0.8 + 0.3×0.75) / 0.8 = 0.78125
    expect(score.weighted_score).to.equal(78.13);
    expect(score.criteria[2]).to.include({
      applicable: false,
      value: null,
      raw_score: 0,
      score: 0,
      normalized_score: 0,
      weight: 0,
      rubric_weight: 0.2,
      weighted_contribution: 0,
      floor_violated: false,
    });
    // Its layers have no criterion that applied.
    expect(score.score_layers).to.include({
      layer3_efficiency: null,
      layer3_advisory: null,
      layer1_objective: 80,
    });
  });

  it('rejects weights that do not sum to 1 and accepts a sum within 0.01', () => {
    const bad = {
      criteria: [
        { id: 'a', metric: 'retries', weight: 0.5 },
        { id: 'b', metric: 'judge', weight: 0.3 },
      ],
    };
    expect(() => loadRubric(bad, 'bad')).to.throw(ValidationError, /sum to 0.8/);
    const close = {
      criteria: [
        { id: 'a', metric: 'output_completeness', weight: 0.5 },
        { id: 'b', metric: 'output_completeness', weight: 0.495 },
      ],
    };
    const score = scoreRubric(
      loadRubric(close, 'close'),
      { a: { value: 1 }, b: { value: 0 } },
      allGates,
    );
    // 0.5 / 0.995 of the weight is met
    expect(score.weighted_score).to.equal(50.25);
  });

  it('rejects schema violations: zero weight, unknown metric, bad thresholds, duplicate ids', () => {
    expect(() =>
      loadRubric({ criteria: [{ id: 'a', metric: 'retries', weight: 0 }] }, 'r'),
    ).to.throw(ValidationError);
    expect(() => loadRubric({ criteria: [{ id: 'a', metric: 'vibes', weight: 1 }] }, 'r')).to.throw(
      ValidationError,
    );
    expect(() =>
      loadRubric(
        { criteria: [{ id: 'a', metric: 'retries', weight: 1, thresholds: { good: 3, bad: 1 } }] },
        'r',
      ),
    ).to.throw(ValidationError, /good must be below/);
    expect(() =>
      loadRubric(
        {
          criteria: [
            { id: 'a', metric: 'retries', weight: 0.5 },
            { id: 'a', metric: 'judge', weight: 0.5 },
          ],
        },
        'r',
      ),
    ).to.throw(ValidationError, /duplicate/);
  });

  it('maps scores to grades at the band edges', () => {
    expect([90, 89.99, 80, 79.99, 70, 69.99, 60, 59.99, 0].map(gradeOf)).to.deep.equal([
      'A',
      'B',
      'B',
      'C',
      'C',
      'D',
      'D',
      'F',
      'F',
    ]);
  });

  it('loads the shipped rubrics', async () => {
    const dir = join(packageRoot, 'workflows', 'eval', 'rubrics');
    for (const id of ['default', 'code_review']) {
      const rubric = await readRubricFile(dir, id);
      expect(rubric.id).to.equal(id);
    }
  });
});
