import { expect } from 'chai';
import { readFile, readdir } from 'node:fs/promises';
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
    expect(similarity).to.include({ normalized_score: null, score: null });
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
