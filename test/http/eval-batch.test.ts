import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import type { EvalBatchResponse } from '../../src/generated/api/eval-batch-response.js';
import { call, startTestService, type TestService } from './harness.js';

/**
 * The batch item the documentation shows: the JSON example (README, or a page under docs/)
 * that has a batch item's `sample_index`, `sample_id` and `passed`.
 */
async function documentedBatchItem(): Promise<Record<string, unknown>> {
  const docs = join(packageRoot, 'docs');
  const pages = [join(packageRoot, 'README.md')];
  const listed = await readdir(docs, { recursive: true }).catch(() => [] as string[]);
  pages.push(...listed.filter((name) => name.endsWith('.md')).map((name) => join(docs, name)));
  for (const page of pages) {
    const text = await readFile(page, 'utf8');
    for (const [, block] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
      const value = JSON.parse(block ?? 'null') as unknown;
      if (typeof value !== 'object' || value === null) continue;
      if (['sample_index', 'sample_id', 'passed'].every((key) => key in value)) {
        return value as Record<string, unknown>;
      }
    }
  }
  throw new Error('no documented batch item (a JSON example with sample_index, sample_id, passed)');
}

describe('batch evaluation (POST /api/eval/runs, GET /api/eval/runs/{batch_id})', () => {
  let service: TestService;
  beforeEach(async () => {
    service = await startTestService();
  });
  afterEach(() => service.dispose());

  it('runs the workflow over the first N samples, each an evaluated run in history, and aggregates', async () => {
    const res = await call(service.url, 'POST', '/api/eval/runs', {
      workflow: 'test_deterministic',
      dataset_source: 'repository',
      dataset_id: 'question_answering',
      limit: 3,
      concurrency: 2,
    });
    expect(res.status).to.equal(200);
    const started = res.body as EvalBatchResponse;
    expect(started).to.include({
      workflow: 'test_deterministic',
      dataset_id: 'question_answering',
      rubric_id: 'default',
      status: 'running',
      total: 3,
      concurrency: 2,
    });
    expect(started.batch_id).to.match(/^batch-[a-z0-9]+$/);
    await service.batches.finished(started.batch_id);
    const done = (await call(service.url, 'GET', `/api/eval/runs/${started.batch_id}`))
      .body as EvalBatchResponse;
    expect(done).to.include({ status: 'complete', completed: 3 });
    expect(done.items.map((i) => [i.sample_index, i.sample_id, i.status])).to.deep.equal([
      [0, 'qa-001', 'success'],
      [1, 'qa-002', 'success'],
      [2, 'qa-003', 'success'],
    ]);
    const scores = done.items.map((i) => i.overall_score as number);
    const mean = Math.round((scores.reduce((a, b) => a + b, 0) / 3) * 100) / 100;
    expect(done.aggregate.scored).to.equal(3);
    expect(done.aggregate.mean_score).to.equal(mean);
    expect(done.aggregate.failures).to.equal(0);
    const grades = Object.values(done.aggregate.grade_distribution).reduce((a, b) => a + b, 0);
    expect(grades).to.equal(3);
    const passed = done.items.filter((i) => i.passed === true).length;
    expect(done.aggregate.pass_rate).to.equal(Math.round((passed / 3) * 10000) / 10000);
    // Each sample is a normal run in history, scored.
    for (const item of done.items) {
      const evaluation = await call(service.url, 'GET', `/api/runs/${item.run_id}/evaluation`);
      expect(evaluation.body).to.deep.include({ evaluation_status: 'complete' });
      const detail = evaluation.body as {
        evaluation: { overall_score: number };
        dataset: { sample_index: number };
      };
      expect(detail.evaluation.overall_score).to.equal(item.overall_score);
      expect(detail.dataset.sample_index).to.equal(item.sample_index);
    }
  });

  it('answers each item with the fields the documentation shows, the score as overall_score (the spec name)', async () => {
    const res = await call(service.url, 'POST', '/api/eval/runs', {
      workflow: 'test_deterministic',
      dataset_source: 'repository',
      dataset_id: 'question_answering',
      sample_indices: [2],
    });
    expect(res.status, res.text).to.equal(200);
    const { batch_id } = res.body as EvalBatchResponse;
    await service.batches.finished(batch_id);
    const done = await call(service.url, 'GET', `/api/eval/runs/${batch_id}`);
    const [item] = (done.body as EvalBatchResponse).items;
    const documented = await documentedBatchItem();
    expect({ ...item, run_id: documented.run_id }).to.deep.equal(documented);
    expect(item).to.not.have.property('score');
  });

  it('runs the chosen sample_indices in that order with the chosen rubric', async () => {
    const res = await call(service.url, 'POST', '/api/eval/runs', {
      workflow: 'conditional_branching',
      dataset_source: 'repository',
      dataset_id: 'question_answering',
      sample_indices: [4, 1],
      rubric_id: 'code_review',
    });
    expect(res.status).to.equal(200);
    const done = await service.batches.finished((res.body as EvalBatchResponse).batch_id);
    expect(done.items.map((i) => i.sample_index)).to.deep.equal([4, 1]);
    expect(done.rubric_id).to.equal('code_review');
    expect(done.items.map((i) => i.status)).to.deep.equal(['success', 'success']);
    expect(done.aggregate.scored).to.equal(2);
  });

  it('refuses bad batches: unknown workflow or dataset 404, bad source, index, rubric or body 422; unknown batch 404', async () => {
    const post = (body: Record<string, unknown>) =>
      call(service.url, 'POST', '/api/eval/runs', {
        workflow: 'test_deterministic',
        dataset_source: 'repository',
        dataset_id: 'question_answering',
        ...body,
      });
    expect((await post({ workflow: 'nope' })).status).to.equal(404);
    expect((await post({ dataset_id: 'nope' })).status).to.equal(404);
    expect((await post({ dataset_id: '../../x' })).status).to.equal(404);
    expect((await post({ dataset_source: 'web' })).status).to.equal(422);
    expect((await post({ sample_indices: [0, 99] })).status).to.equal(422);
    expect((await post({ rubric_id: 'nope' })).status).to.equal(422);
    expect((await post({ concurrency: 0 })).status).to.equal(422);
    expect((await post({ limit: 2, sample_indices: [0] })).status).to.equal(422);
    expect((await call(service.url, 'GET', '/api/eval/runs/batch-unknown')).status).to.equal(404);
    expect((await call(service.url, 'GET', '/api/eval/runs/..%2F..%2Fetc')).status).to.equal(404);
  });
});
