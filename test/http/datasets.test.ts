import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';

describe('evaluation dataset endpoints', () => {
  let service: TestService;
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-ds-'));
    await mkdir(join(root, 'local'), { recursive: true });
    await writeFile(
      join(root, 'local', 'mine.jsonl'),
      '{"id":"m1","text":"hello local","expected_output":"HELLO"}\n\n{"id":"m2","text":"second"}\n',
    );
    await writeFile(join(root, 'local', 'broken.json'), '{not json');
    service = await startTestService({ env: { AGENTIC_LOCAL_DATASETS_DIR: join(root, 'local') } });
  });
  after(async () => {
    await service.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it('lists the dataset endpoints in OpenAPI, the query forms marked deprecated', async () => {
    const doc = (await call(service.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, { get?: { deprecated?: boolean } }>;
    };
    const deprecated = (path: string) => doc.paths[path]?.get?.deprecated === true;
    expect(deprecated('/api/eval/datasets/sample-list')).to.equal(true);
    expect(deprecated('/api/eval/datasets/sample-detail')).to.equal(true);
    expect(doc.paths['/api/eval/datasets/{source}/{dataset_id}/samples']?.get).to.not.equal(
      undefined,
    );
    expect(deprecated('/api/eval/datasets/{source}/{dataset_id}/samples')).to.equal(false);
    expect(doc.paths['/api/workflows/{workflow_name}/preview-dataset-inputs']?.get).to.not.equal(
      undefined,
    );
  });

  it('keeps workflows/eval out of the workflow list', async () => {
    const res = await call(service.url, 'GET', '/api/workflows');
    const names = (res.body as { workflows: string[] }).workflows;
    expect(names).to.include('test_deterministic');
    for (const notAWorkflow of ['eval', 'default', 'code_review_samples', 'eval_sets']) {
      expect(names).to.not.include(notAWorkflow);
    }
  });

  it('lists repository datasets, local datasets and eval sets', async () => {
    const res = await call(service.url, 'GET', '/api/eval/datasets');
    expect(res.status).to.equal(200);
    const body = res.body as {
      repository: { id: string; sample_count: number }[];
      local: { id: string }[];
      eval_sets: { id: string }[];
    };
    expect(body.repository.map((d) => d.id)).to.deep.equal([
      'bug_fixing',
      'code_review_samples',
      'question_answering',
    ]);
    expect(body.repository.every((d) => d.sample_count >= 5)).to.equal(true);
    expect(body.local.map((d) => d.id)).to.deep.equal(['mine']);
    expect(body.eval_sets.map((s) => s.id)).to.deep.equal(['code_quality', 'knowledge']);
  });

  it('keeps the datasets compatible with ?workflow= and 404s an unknown workflow', async () => {
    const res = await call(service.url, 'GET', '/api/eval/datasets?workflow=code_review');
    const body = res.body as { repository: { id: string }[]; eval_sets: { id: string }[] };
    expect(body.repository.map((d) => d.id)).to.deep.equal(['bug_fixing', 'code_review_samples']);
    expect(body.eval_sets.map((s) => s.id)).to.deep.equal(['code_quality']);
    expect((await call(service.url, 'GET', '/api/eval/datasets?workflow=nope')).status).to.equal(
      404,
    );
  });

  it('pages samples in the path form and the deprecated query form with the same body', async () => {
    const path = await call(
      service.url,
      'GET',
      '/api/eval/datasets/repository/code_review_samples/samples?offset=1&limit=2',
    );
    const old = await call(
      service.url,
      'GET',
      '/api/eval/datasets/sample-list?dataset_source=repository&dataset_id=code_review_samples&offset=1&limit=2',
    );
    expect(path.status).to.equal(200);
    expect(old.body).to.deep.equal(path.body);
    expect(old.headers.get('deprecation')).to.equal('true');
    expect(path.headers.get('deprecation')).to.equal(null);
    const body = path.body as { sample_count: number; samples: unknown[] };
    expect(body.sample_count).to.equal(6);
    expect(body.samples[0]).to.deep.equal({
      sample_index: 1,
      sample_id: 'cr-002',
      task_id: 'sql-injection',
      title: 'SQL query formatted with a user id',
      summary:
        'def find_user(db, user_id): cursor = db.cursor() cursor.execute(f"SELECT * FROM users WHERE id = {user_id}") return cursor.fetchone()',
      field_names: ['id', 'task_id', 'title', 'inputs', 'expected_output'],
    });
  });

  it('details one sample in both forms, with a workflow preview on request', async () => {
    const path = await call(
      service.url,
      'GET',
      '/api/eval/datasets/local/mine/samples/0?workflow=test_deterministic',
    );
    const old = await call(
      service.url,
      'GET',
      '/api/eval/datasets/sample-detail?dataset_source=local&dataset_id=mine&sample_index=0&workflow=test_deterministic',
    );
    expect(path.status).to.equal(200);
    expect(old.body).to.deep.equal(path.body);
    expect(old.headers.get('deprecation')).to.equal('true');
    expect(path.body).to.deep.include({
      dataset_source: 'local',
      dataset_id: 'mine',
      sample_index: 0,
      sample_id: 'm1',
      sample: { id: 'm1', text: 'hello local', expected_output: 'HELLO' },
      workflow_preview: { text: 'hello local' },
    });
  });

  it('previews dataset inputs through the dataset input_mapping', async () => {
    const res = await call(
      service.url,
      'GET',
      '/api/workflows/test_deterministic/preview-dataset-inputs?dataset_source=repository&dataset_id=question_answering&sample_index=2',
    );
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      workflow: 'test_deterministic',
      dataset_source: 'repository',
      dataset_id: 'question_answering',
      sample_index: 2,
      compatible: true,
      adapted_inputs: {
        text: 'What are the three messages of the TCP handshake?',
      },
      missing_inputs: [],
      input_errors: [],
    });
  });

  it('answers 422 for a bad source, an index out of range or a bad number, 404 for an unknown dataset', async () => {
    const statuses = await Promise.all(
      [
        '/api/eval/datasets/remote/x/samples',
        '/api/eval/datasets/sample-list?dataset_source=s3&dataset_id=x',
        '/api/eval/datasets/repository/bug_fixing/samples/5',
        '/api/eval/datasets/repository/bug_fixing/samples/-1',
        '/api/eval/datasets/repository/bug_fixing/samples?limit=0',
        '/api/workflows/test_deterministic/preview-dataset-inputs?dataset_source=repository&dataset_id=bug_fixing&sample_index=99',
        '/api/eval/datasets/local/broken/samples',
        '/api/eval/datasets/repository/nope/samples',
        '/api/workflows/nope/preview-dataset-inputs?dataset_source=repository&dataset_id=bug_fixing',
      ].map(async (path) => (await call(service.url, 'GET', path)).status),
    );
    expect(statuses).to.deep.equal([422, 422, 422, 422, 422, 422, 422, 404, 404]);
  });

  it('answers traversal attempts in dataset ids with 404 and never reads outside the dirs', async () => {
    const attempts = [
      '/api/eval/datasets/repository/..%2F..%2Fpackage/samples',
      '/api/eval/datasets/repository/%2E%2E/samples',
      '/api/eval/datasets/local/..%2Fruns%2Fx/samples/0',
      '/api/eval/datasets/sample-list?dataset_source=repository&dataset_id=../../package',
      '/api/eval/datasets/sample-detail?dataset_source=local&dataset_id=%2Fetc%2Fpasswd&sample_index=0',
      '/api/eval/datasets/sample-list?dataset_source=repository&dataset_id=..%5C..%5Cpackage',
      '/api/workflows/test_deterministic/preview-dataset-inputs?dataset_source=repository&dataset_id=../datasets/bug_fixing',
      '/api/eval/datasets/repository/.hidden/samples',
    ];
    for (const path of attempts) {
      const res = await call(service.url, 'GET', path);
      expect(res.status, path).to.equal(404);
      // Dot segments may already be resolved away before routing (a plain 404 then).
      expect(['Dataset not found', 'Not Found'], path).to.include(
        (res.body as { detail: string }).detail,
      );
    }
  });
});
