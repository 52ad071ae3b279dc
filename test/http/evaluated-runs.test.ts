import { expect } from 'chai';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { connectWs, openSse } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

const tail = (events: WorkflowEvent[]): string[] => events.slice(-3).map((e) => e.type);

describe('evaluated runs over HTTP (no-LLM mode)', () => {
  let service: TestService;
  beforeEach(async () => {
    service = await startTestService();
  });
  afterEach(() => service.dispose());

  it('maps the sample onto the inputs, scores the run and streams workflow_end → evaluation_start → evaluation_complete on WS and SSE', async () => {
    const wsUrl = `${service.url.replace('http', 'ws')}/ws/execution/ev-1`;
    const ws = connectWs(wsUrl);
    await ws.opened;
    const started = await call(service.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      run_id: 'ev-1',
      input_data: { label: 'demo' },
      evaluation: {
        enabled: true,
        dataset_source: 'repository',
        dataset_id: 'question_answering',
        sample_index: 2,
      },
    });
    expect(started.status).to.equal(200);
    const sse = await openSse(`${service.url}/api/runs/ev-1/stream`);
    const sseFrames = (await sse.frames.done()) as unknown as WorkflowEvent[];
    const wsEvents = await ws.events.until(
      (items) => items.some((e) => e.type === 'evaluation_complete'),
      'evaluation_complete on WS',
    );
    ws.ws.close();
    await ws.closed;

    expect(tail(sseFrames)).to.deep.equal([
      'workflow_end',
      'evaluation_start',
      'evaluation_complete',
    ]);
    expect(tail(wsEvents)).to.deep.equal([
      'workflow_end',
      'evaluation_start',
      'evaluation_complete',
    ]);
    expect(wsEvents.map((e) => e.seq)).to.deep.equal(wsEvents.map((_, i) => i));
    const complete = wsEvents.at(-1) as unknown as Record<string, unknown>;
    expect(sseFrames.at(-1)).to.deep.equal(complete);
    expect(complete).to.include({
      type: 'evaluation_complete',
      run_id: 'ev-1',
      rubric: 'Default quality rubric',
      rubric_id: 'default',
      rubric_version: '1',
      evaluator: 'deterministic_judge',
      pass_threshold: 70,
    });
    expect(complete.weighted_score).to.be.a('number').within(0, 100);
    expect(complete.overall_score).to.be.a('number').within(0, 100);
    expect(['A', 'B', 'C', 'D', 'F']).to.include(complete.grade);
    expect(complete.passed).to.be.a('boolean');
    expect(complete.hard_gates).to.deep.equal({
      required_outputs_present: true,
      overall_status_success: true,
      no_critical_step_failures: true,
    });
    expect(complete.floor_violations).to.deep.equal([]);
    expect(complete.hard_gate_failures).to.deep.equal([]);
    const criteria = complete.criteria as Record<string, unknown>[];
    expect(criteria.map((c) => c.criterion)).to.deep.equal([
      'status',
      'completeness',
      'reliability',
      'latency',
      'similarity',
      'quality',
    ]);
    for (const c of criteria) {
      expect(c).to.include.keys(
        'criterion',
        'score',
        'max_score',
        'weight',
        'normalized_score',
        'floor_violated',
      );
    }
    const start = wsEvents.at(-2) as unknown as Record<string, unknown>;
    expect(start).to.include({
      rubric_id: 'default',
      dataset_id: 'question_answering',
      sample_index: 2,
    });

    // Request inputs win over the sample's; the rest come from the sample.
    const detail = await call(service.url, 'GET', '/api/runs/ev-1/evaluation');
    expect(detail.status).to.equal(200);
    const body = detail.body as Record<string, unknown> & { evaluation: Record<string, unknown> };
    expect(body).to.include({
      run_id: 'ev-1',
      evaluation_requested: true,
      evaluation_status: 'complete',
    });
    expect(body.dataset).to.deep.equal({
      source: 'repository',
      id: 'question_answering',
      sample_index: 2,
      sample_id: 'qa-003',
    });
    expect(body.evaluation).to.include({
      weighted_score: complete.weighted_score,
      overall_score: complete.overall_score,
      grade: complete.grade,
      rubric_id: 'default',
    });
    expect(body.evaluation.score_layers).to.include.keys('weighted', 'after_floors', 'after_gates');

    const run = (await call(service.url, 'GET', '/api/runs/ev-1')).body as {
      inputs: Record<string, unknown>;
    };
    expect(run.inputs).to.deep.equal({
      text: 'What are the three messages of the TCP handshake?',
      label: 'demo',
    });
    const list = (await call(service.url, 'GET', '/api/runs')).body as Record<string, unknown>[];
    expect(list[0]).to.include({
      run_id: 'ev-1',
      evaluation_score: complete.overall_score,
      evaluation_grade: complete.grade,
    });
    const file = (await readdir(service.runsDir)).find((name) => name.endsWith('_ev-1.json'));
    const stored = JSON.parse(await readFile(join(service.runsDir, file ?? ''), 'utf8')) as {
      extra: { evaluation: Record<string, unknown> };
    };
    expect(stored.extra.evaluation).to.deep.equal(body.evaluation);

    // Rebuilt from the run file, the evaluation events are the live ones (but for timestamps).
    const found = await service.history.getByRunId('ev-1');
    const rebuilt = service.hub.replayFromRecord(found!.record, found!.filename);
    const withoutTime = (e: WorkflowEvent) => ({ ...e, timestamp: '' });
    expect(rebuilt.slice(-2).map(withoutTime)).to.deep.equal(wsEvents.slice(-2).map(withoutTime));

    // A late joiner gets the same evaluation_complete rebuilt (or replayed) and the stream ends.
    const late = await openSse(`${service.url}/api/runs/ev-1/stream`);
    const lateFrames = (await late.frames.done()) as unknown as WorkflowEvent[];
    expect(tail(lateFrames)).to.deep.equal([
      'workflow_end',
      'evaluation_start',
      'evaluation_complete',
    ]);
  });

  it('scores a run without a dataset and answers evaluation null for a run not evaluated', async () => {
    await call(service.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      run_id: 'ev-plain',
    });
    await service.finished('ev-plain');
    const plain = await call(service.url, 'GET', '/api/runs/ev-plain/evaluation');
    expect(plain.body).to.include({
      evaluation: null,
      evaluation_requested: false,
      evaluation_status: 'not_requested',
    });

    const sse = await (async () => {
      await call(service.url, 'POST', '/api/run', {
        workflow: 'test_deterministic',
        run_id: 'ev-nodata',
        evaluation: { enabled: true, dataset_source: 'none', rubric_id: 'code_review' },
      });
      return openSse(`${service.url}/api/runs/ev-nodata/stream`);
    })();
    const frames = (await sse.frames.done()) as unknown as WorkflowEvent[];
    const complete = frames.at(-1) as unknown as Record<string, unknown>;
    expect(complete).to.include({ type: 'evaluation_complete', rubric_id: 'code_review' });
    const similarity = (complete.criteria as Record<string, unknown>[]).find(
      (c) => c.criterion === 'findings',
    );
    expect(similarity).to.include({
      applicable: false,
      normalized_score: 0,
      score: 0,
      weight: 0,
      rubric_weight: 0.3,
    });
  });

  describe('GET /api/runs/{filename}/evaluation: the shape clients read', () => {
    // Every computed layer, a judge, a floor on the similarity and one on completeness.
    const RUBRIC = [
      'id: client_shape',
      'name: Client shape rubric',
      'version: 3',
      'pass_threshold: 70',
      'criteria:',
      '  - { id: status, name: Run succeeded, metric: status_success, weight: 0.2 }',
      '  - { id: completeness, name: Outputs present, metric: output_completeness, weight: 0.2, critical_floor: 50 }',
      '  - { id: reliability, name: Few retries, metric: retries, weight: 0.1 }',
      '  - { id: latency, name: Fast, metric: duration_ms, weight: 0.1 }',
      '  - { id: similarity, name: Close to expected, metric: expected_similarity, weight: 0.2, critical_floor: 30 }',
      '  - { id: quality, name: Judged quality, metric: judge, weight: 0.2, description: Is it good? }',
      '',
    ].join('\n');

    const evaluate = async (runId: string, dataset: Record<string, unknown>) => {
      await writeFile(join(service.workflowsDir, 'eval', 'rubrics', 'client_shape.yaml'), RUBRIC);
      const started = await call(service.url, 'POST', '/api/run', {
        workflow: 'test_deterministic',
        run_id: runId,
        input_data: { label: 'demo' },
        evaluation: { enabled: true, rubric_id: 'client_shape', ...dataset },
      });
      expect(started.status, started.text).to.equal(200);
      const sse = await openSse(`${service.url}/api/runs/${runId}/stream`);
      await sse.frames.done();
      const detail = await call(service.url, 'GET', `/api/runs/${runId}/evaluation`);
      expect(detail.status).to.equal(200);
      const body = detail.body as Record<string, unknown> & { evaluation: Record<string, unknown> };
      const run = (await call(service.url, 'GET', `/api/runs/${runId}`)).body as {
        total_duration_ms: number;
      };
      return { body, ms: run.total_duration_ms };
    };

    /**
     * Writes the run's file again as an earlier version stored it (under `oldId`): criteria that
     * did not apply with null scores and the rubric's weight, floor violations and layers with
     * only our fields. Returns what GET .../evaluation answers for it.
     */
    const asEarlierVersion = async (runId: string, oldId: string) => {
      const file = (await readdir(service.runsDir)).find((name) => name.endsWith(`_${runId}.json`));
      const record = JSON.parse(await readFile(join(service.runsDir, file ?? ''), 'utf8')) as {
        run_id: string;
        extra: { evaluation: Record<string, unknown> };
      };
      const evaluation = record.extra.evaluation;
      evaluation.criteria = (evaluation.criteria as Record<string, unknown>[]).map(
        ({ rubric_weight, ...c }) =>
          c.applicable === false
            ? { ...c, raw_score: null, score: null, normalized_score: null, weight: rubric_weight }
            : c,
      );
      evaluation.floor_violations = (evaluation.floor_violations as Record<string, unknown>[]).map(
        ({ criterion, raw_score, critical_floor }) => ({ criterion, raw_score, critical_floor }),
      );
      const layers = evaluation.score_layers as Record<string, unknown>;
      evaluation.score_layers = {
        weighted: layers.weighted,
        weighted_grade: layers.weighted_grade,
        after_floors: layers.after_floors,
        after_gates: layers.after_gates,
      };
      record.run_id = oldId;
      const oldFile = (file ?? '').replace(`_${runId}.json`, `_${oldId}.json`);
      await writeFile(join(service.runsDir, oldFile), JSON.stringify(record));
      const detail = await call(service.url, 'GET', `/api/runs/${oldFile}/evaluation`);
      expect(detail.status).to.equal(200);
      return { body: detail.body as Record<string, unknown>, filename: oldFile };
    };

    const criterion = (
      id: string,
      name: string,
      metric: string,
      formula: string,
      weight: number,
      normalized: number,
      value: number,
      detail: string,
      floor: number | null = null,
    ) => ({
      criterion: id,
      name,
      metric,
      formula,
      value,
      raw_score: normalized * 100,
      score: normalized * 100,
      max_score: 100,
      weight,
      rubric_weight: weight,
      normalized_score: normalized,
      weighted_contribution: weight * normalized,
      applicable: true,
      critical_floor: floor,
      floor_violated: floor !== null && normalized * 100 < floor,
      detail,
      error: null,
    });

    const common = (runId: string, body: Record<string, unknown>) => ({
      run_id: runId,
      filename: body.filename,
      workflow_name: 'test_deterministic',
      status: 'success',
      evaluation_requested: true,
      evaluation_status: 'complete',
    });
    const evaluationHead = {
      enabled: true,
      status: 'complete',
      rubric_id: 'client_shape',
      rubric: 'Client shape rubric',
      rubric_version: '3',
      pass_threshold: 70,
      hard_gates: {
        required_outputs_present: true,
        overall_status_success: true,
        no_critical_step_failures: true,
      },
      hard_gate_failures: [],
      evaluator: 'deterministic_judge',
      judge: { status: 'ok', model: null, attempts: 0, error: null },
      error: null,
    };

    it('carries the reference layers and floor fields beside ours, and the run status', async () => {
      const { body, ms } = await evaluate('shape-1', {
        dataset_source: 'repository',
        dataset_id: 'question_answering',
        sample_index: 2,
      });
      expect(body).to.deep.equal({
        ...common('shape-1', body),
        dataset: {
          source: 'repository',
          id: 'question_answering',
          sample_index: 2,
          sample_id: 'qa-003',
        },
        evaluation: {
          ...evaluationHead,
          dataset_source: 'repository',
          dataset_id: 'question_answering',
          sample_index: 2,
          sample_id: 'qa-003',
          // (0.2 + 0.2 + 0.1 + 0.1) / 1: similarity and the judge score 0.
          weighted_score: 60,
          overall_score: 60,
          grade: 'D',
          passed: false,
          criteria: [
            criterion(
              'status',
              'Run succeeded',
              'status_success',
              'binary',
              0.2,
              1,
              1,
              'status success',
            ),
            criterion(
              'completeness',
              'Outputs present',
              'output_completeness',
              'zero_one',
              0.2,
              1,
              1,
              '100% of declared outputs present',
              50,
            ),
            criterion(
              'reliability',
              'Few retries',
              'retries',
              'lower_is_better',
              0.1,
              1,
              0,
              '0 retries',
            ),
            criterion('latency', 'Fast', 'duration_ms', 'lower_is_better', 0.1, 1, ms, `${ms} ms`),
            criterion(
              'similarity',
              'Close to expected',
              'expected_similarity',
              'zero_one',
              0.2,
              0,
              0,
              'word overlap with the expected output (Dice)',
              30,
            ),
            criterion(
              'quality',
              'Judged quality',
              'judge',
              'likert_1_5',
              0.2,
              0,
              1,
              'deterministic judge: overlap with the expected output 0%',
            ),
          ],
          score_layers: {
            weighted: 60,
            weighted_grade: 'D',
            after_floors: 60,
            after_gates: 60,
            layer1_objective: 100,
            layer2_judge: 0,
            layer3_similarity: 0,
            layer3_efficiency: 100,
            // (0.2 × 0 + 0.1 × 1 + 0.1 × 1) / 0.4
            layer3_advisory: 50,
          },
          floor_violations: [
            {
              criterion: 'similarity',
              raw_score: 0,
              critical_floor: 30,
              floor: 0.3,
              normalized_score: 0,
            },
          ],
          completed_at: body.evaluation.completed_at,
        },
      });
      expect(body.evaluation.completed_at).to.be.a('string');

      const earlier = await asEarlierVersion('shape-1', 'shape-1-v0');
      expect(earlier.body).to.deep.equal({
        ...body,
        run_id: 'shape-1-v0',
        filename: earlier.filename,
      });
    });

    it('gives a criterion that did not apply numbers and no weight, and its layer null', async () => {
      const { body, ms } = await evaluate('shape-2', { dataset_source: 'none' });
      expect(body).to.deep.equal({
        ...common('shape-2', body),
        dataset: null,
        evaluation: {
          ...evaluationHead,
          dataset_source: null,
          dataset_id: null,
          sample_index: null,
          sample_id: null,
          // The similarity's 0.2 is left out: 0.8 / 0.8.
          weighted_score: 100,
          overall_score: 100,
          grade: 'A',
          passed: true,
          criteria: [
            criterion(
              'status',
              'Run succeeded',
              'status_success',
              'binary',
              0.2,
              1,
              1,
              'status success',
            ),
            criterion(
              'completeness',
              'Outputs present',
              'output_completeness',
              'zero_one',
              0.2,
              1,
              1,
              '100% of declared outputs present',
              50,
            ),
            criterion(
              'reliability',
              'Few retries',
              'retries',
              'lower_is_better',
              0.1,
              1,
              0,
              '0 retries',
            ),
            criterion('latency', 'Fast', 'duration_ms', 'lower_is_better', 0.1, 1, ms, `${ms} ms`),
            {
              criterion: 'similarity',
              name: 'Close to expected',
              metric: 'expected_similarity',
              formula: 'zero_one',
              value: null,
              raw_score: 0,
              score: 0,
              max_score: 100,
              weight: 0,
              rubric_weight: 0.2,
              normalized_score: 0,
              weighted_contribution: 0,
              applicable: false,
              critical_floor: 30,
              floor_violated: false,
              detail: 'the sample has no expected output',
              error: null,
            },
            criterion(
              'quality',
              'Judged quality',
              'judge',
              'likert_1_5',
              0.2,
              1,
              5,
              'deterministic judge: output completeness 100%',
            ),
          ],
          score_layers: {
            weighted: 100,
            weighted_grade: 'A',
            after_floors: 100,
            after_gates: 100,
            layer1_objective: 100,
            layer2_judge: 100,
            layer3_similarity: null,
            layer3_efficiency: 100,
            layer3_advisory: 100,
          },
          floor_violations: [],
          completed_at: body.evaluation.completed_at,
        },
      });

      const earlier = await asEarlierVersion('shape-2', 'shape-2-v0');
      expect(earlier.body).to.deep.equal({
        ...body,
        run_id: 'shape-2-v0',
        filename: earlier.filename,
      });
    });
  });

  it('rejects an unknown dataset (404), an index out of range, a bad source and an unknown rubric (422)', async () => {
    const post = (evaluation: Record<string, unknown>) =>
      call(service.url, 'POST', '/api/run', {
        workflow: 'test_deterministic',
        evaluation: { enabled: true, ...evaluation },
      });
    expect((await post({ dataset_source: 'repository', dataset_id: 'nope' })).status).to.equal(404);
    expect((await post({ dataset_source: 'repository', dataset_id: '../x' })).status).to.equal(404);
    const range = await post({
      dataset_source: 'repository',
      dataset_id: 'bug_fixing',
      sample_index: 9,
    });
    expect(range.status).to.equal(422);
    expect(JSON.stringify(range.body)).to.include('sample_index');
    expect((await post({ rubric_id: 'nope' })).status).to.equal(422);
    expect((await post({ rubric_id: '../../etc/passwd' })).status).to.equal(422);
  });
});
