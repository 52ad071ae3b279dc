/**
 * `GET /api/workflows/{workflow_name}/preview-dataset-inputs` tells what `POST /api/run` would do
 * with the sample: the same input checks, the same refusal.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './harness.js';

describe('GET /api/workflows/{workflow_name}/preview-dataset-inputs: input checks', () => {
  let service: TestService;
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-preview-'));
    await mkdir(join(root, 'local'), { recursive: true });
    // test_deterministic's `label` is an enum: smoke | demo | ci.
    await writeFile(
      join(root, 'local', 'labels.jsonl'),
      [
        '{"id":"g1","text":"hello there","label":"greeting"}',
        '{"id":"d1","text":"hello demo","label":"demo"}',
        '{"id":"n1","text":"a number","label":7}',
      ].join('\n'),
    );
    service = await startTestService({ env: { AGENTIC_LOCAL_DATASETS_DIR: join(root, 'local') } });
  });
  after(async () => {
    await service.dispose();
    await rm(root, { recursive: true, force: true });
  });

  const preview = (index: number) =>
    call(
      service.url,
      'GET',
      `/api/workflows/test_deterministic/preview-dataset-inputs?dataset_source=local&dataset_id=labels&sample_index=${index}`,
    );
  const run = (index: number) =>
    call(service.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      evaluation: {
        enabled: true,
        dataset_source: 'local',
        dataset_id: 'labels',
        sample_index: index,
      },
    });

  it('reports a sample value outside an input enum as refused, with the message POST /api/run gives', async () => {
    const refused = await run(0);
    expect(refused.status).to.equal(422);
    expect(refused.body).to.deep.equal({
      detail: [
        {
          loc: ['body', 'input_data', 'label'],
          msg: 'input \'label\' must be one of "smoke", "demo", "ci", not "greeting"',
          type: 'value_error.enum',
        },
      ],
    });
    const res = await preview(0);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      workflow: 'test_deterministic',
      dataset_source: 'local',
      dataset_id: 'labels',
      sample_index: 0,
      compatible: false,
      adapted_inputs: { text: 'hello there', label: 'greeting' },
      missing_inputs: [],
      input_errors: (refused.body as { detail: unknown }).detail,
    });
  });

  it('reports a value of the wrong type the same way', async () => {
    const refused = await run(2);
    expect(refused.status).to.equal(422);
    const res = await preview(2);
    expect(res.body).to.include({ compatible: false });
    expect((res.body as { input_errors: unknown }).input_errors).to.deep.equal(
      (refused.body as { detail: unknown }).detail,
    );
    expect((res.body as { input_errors: { msg: string }[] }).input_errors[0]?.msg).to.equal(
      "input 'label' must be a string, not an integer",
    );
  });

  it('answers compatible with no input errors for a sample the run accepts', async () => {
    const res = await preview(1);
    expect(res.body).to.deep.equal({
      workflow: 'test_deterministic',
      dataset_source: 'local',
      dataset_id: 'labels',
      sample_index: 1,
      compatible: true,
      adapted_inputs: { text: 'hello demo', label: 'demo' },
      missing_inputs: [],
      input_errors: [],
    });
    const started = await run(1);
    expect(started.status, started.text).to.equal(200);
    await service.finished((started.body as { run_id: string }).run_id);
  });
});
