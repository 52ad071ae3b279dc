import { expect } from 'chai';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openSse } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

const SLOW = `name: slow
description: Sleeps until cancelled.
steps:
  - name: wait
    agent: tier0_sleep
    description: Sleep a minute.
    inputs:
      ms: 60000
`;

type Summary = Record<string, unknown> & { run_id: string; filename: string; status: string };

describe('HTTP run endpoints', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
    await writeFile(join(svc.workflowsDir, 'slow.yaml'), SLOW);
  });
  afterEach(async () => {
    await svc.dispose();
  });

  async function startRun(body: Record<string, unknown>): Promise<string> {
    const res = await call(svc.url, 'POST', '/api/run', body);
    expect(res.status, res.text).to.equal(200);
    const { run_id: runId, status } = res.body as { run_id: string; status: string };
    expect(status).to.equal('pending');
    return runId;
  }

  it('POST /api/run answers {run_id, status: pending}; the run is persisted, listed and readable', async () => {
    const runId = await startRun({
      workflow: 'test_deterministic',
      input_data: { text: '  abc  ' },
      run_id: 'my-run_1',
      adapter: 'native',
      execution_profile: { runtime: 'subprocess', max_attempts: 2, max_duration_minutes: 5 },
    });
    expect(runId).to.equal('my-run_1');
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.adapter).to.equal('native');
    expect(record.extra.execution_profile).to.deep.equal({
      runtime: 'subprocess',
      max_attempts: 2,
      max_duration_minutes: 5,
      container_image: null,
    });
    const files = (await readdir(svc.runsDir)).filter((f) => f.endsWith('.json'));
    expect(files).to.have.length(1);
    const filename = files[0] as string;
    expect(filename).to.match(/^\d{8}T\d{9}Z_test_deterministic_my-run_1\.json$/);

    const list = await call(svc.url, 'GET', '/api/runs');
    expect(list.status).to.equal(200);
    const [entry] = list.body as Summary[];
    expect(entry).to.deep.include({
      filename,
      run_id: 'my-run_1',
      workflow_name: 'test_deterministic',
      status: 'success',
      success_rate: 100,
      step_count: 3,
      failed_step_count: 0,
      evaluation_score: null,
      evaluation_grade: null,
    });
    expect(entry).to.have.all.keys(
      'filename',
      'run_id',
      'workflow_name',
      'status',
      'success_rate',
      'total_duration_ms',
      'step_count',
      'failed_step_count',
      'start_time',
      'end_time',
      'evaluation_score',
      'evaluation_grade',
    );

    const onDisk = JSON.parse(await readFile(join(svc.runsDir, filename), 'utf8')) as unknown;
    const byFile = await call(svc.url, 'GET', `/api/runs/${filename}`);
    expect(byFile.status).to.equal(200);
    expect(byFile.body).to.deep.equal(onDisk);
    const byId = await call(svc.url, 'GET', '/api/runs/my-run_1');
    expect(byId.body).to.deep.equal(onDisk);
  });

  it('defaults the adapter from configuration and accepts a YAML path inside the workflows dir', async () => {
    const runId = await startRun({ workflow: 'test_deterministic.yaml' });
    const record = await svc.finished(runId);
    expect(record.adapter).to.equal('graph');
    expect(record.status).to.equal('success');
  });

  it('answers 422 lists for bad bodies, unknown workflows and adapters, bad inputs', async () => {
    const cases: [Record<string, unknown> | string, (string | number)[]][] = [
      [{}, ['body', 'workflow']],
      [{ workflow: 'test_deterministic', run_id: 'bad id!' }, ['body', 'run_id']],
      [{ workflow: 'test_deterministic', run_id: 'x'.repeat(129) }, ['body', 'run_id']],
      [{ workflow: 'test_deterministic', adapter: 'langgraph' }, ['body', 'adapter']],
      [{ workflow: 'nope' }, ['body', 'workflow']],
      [{ workflow: '../etc/passwd.yaml' }, ['body', 'workflow']],
      [
        { workflow: 'test_deterministic', input_data: { label: 'other' } },
        ['body', 'input_data', 'label'],
      ],
      [{ workflow: 'test_deterministic', input_data: { text: 5 } }, ['body', 'input_data', 'text']],
      [
        { workflow: 'conditional_branching', input_data: { threshold: '4x' } },
        ['body', 'input_data', 'threshold'],
      ],
      [
        { workflow: 'conditional_branching', input_data: { thresold: 40 } },
        ['body', 'input_data', 'thresold'],
      ],
      [
        { workflow: 'test_deterministic', execution_profile: { runtime: 'vm' } },
        ['body', 'execution_profile', 'runtime'],
      ],
      [
        { workflow: 'test_deterministic', execution_profile: { max_attempts: 0 } },
        ['body', 'execution_profile', 'max_attempts'],
      ],
      [
        { workflow: 'test_deterministic', execution_profile: { max_duration_minutes: 0 } },
        ['body', 'execution_profile', 'max_duration_minutes'],
      ],
      [
        { workflow: 'test_deterministic', execution_profile: { container_image: 3 } },
        ['body', 'execution_profile', 'container_image'],
      ],
      [{ workflow: 'test_deterministic', surprise: true }, ['body', 'surprise']],
    ];
    for (const [body, loc] of cases) {
      const res = await call(svc.url, 'POST', '/api/run', body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      const details = (res.body as { detail: { loc: unknown[]; msg: string; type: string }[] })
        .detail;
      expect(details, JSON.stringify(body)).to.be.an('array');
      expect(
        details.map((d) => d.loc),
        JSON.stringify(body),
      ).to.deep.include(loc);
    }
    // Only this service's owner file (store/owner.ts): no run file.
    expect((await readdir(svc.runsDir)).filter((n) => !n.endsWith('.owner'))).to.deep.equal([]);
  });

  it('records disabled evaluation settings as sent (evaluated runs: test/http/evaluated-runs.test.ts)', async () => {
    const runId = await startRun({
      workflow: 'test_deterministic',
      evaluation: { enabled: false },
    });
    const record = await svc.finished(runId);
    expect(record.extra.evaluation).to.deep.equal({ enabled: false });
  });

  it('generates a run id whose text before the last - is the workflow (what the web UI guesses)', async () => {
    const runId = await startRun({ workflow: 'conditional_branching' });
    expect(runId).to.match(/^conditional_branching-[a-z0-9]+$/);
    const record = await svc.finished(runId);
    expect(record.run_id).to.equal(runId);
  });

  it('converts the strings a form sends ("40" for an integer input), so the UI can start conditional_branching', async () => {
    const runId = await startRun({
      workflow: 'conditional_branching',
      input_data: { threshold: '5', text: 'longer than five' },
    });
    const record = await svc.finished(runId);
    expect(record.status).to.equal('success');
    expect(record.inputs).to.deep.equal({ threshold: 5, text: 'longer than five' });
    expect(record.final_output).to.deep.include({ branch: 'long' });
    const typo = await call(svc.url, 'POST', '/api/run', {
      workflow: 'conditional_branching',
      input_data: { thresold: '40' },
    });
    expect(typo.status).to.equal(422);
    expect(typo.body).to.deep.equal({
      detail: [
        {
          loc: ['body', 'input_data', 'thresold'],
          msg: "unknown input 'thresold'; conditional_branching takes text, threshold",
          type: 'extra_forbidden',
        },
      ],
    });
  });

  it('accepts evaluation.dataset_source "none", the Python service default', async () => {
    const evaluation = { enabled: false, dataset_source: 'none', dataset_id: '', sample_index: 0 };
    const runId = await startRun({ workflow: 'test_deterministic', evaluation });
    const record = await svc.finished(runId);
    expect(record.extra.evaluation).to.deep.equal(evaluation);
    const bad = await call(svc.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      evaluation: { dataset_source: 'elsewhere' },
    });
    expect(bad.status).to.equal(422);
  });

  it('keeps no event of a running run beyond the replay buffer (nothing buffers them for the POST)', async () => {
    // 1 + 2 × 260 + 1 events while the first step sleeps: more than the 500 the hub keeps.
    const echoes = Array.from(
      { length: 260 },
      (_, i) => `  - { name: e${i}, agent: tier0_echo, inputs: { v: ${i} } }`,
    );
    const many = `name: many\nsteps:\n  - { name: wait, agent: tier0_sleep, inputs: { ms: 60000 } }\n${echoes.join('\n')}\n`;
    await writeFile(join(svc.workflowsDir, 'many.yaml'), many);
    // Only weak references to the events (this listener keeps nothing).
    const seen: WeakRef<object>[] = [];
    const off = svc.runtime.subscribe((event) => {
      if (event.run_id === 'many-1') seen.push(new WeakRef(event));
    });
    try {
      await startRun({ workflow: 'many', run_id: 'many-1' });
      while (seen.length < 522) await new Promise<void>((resolve) => setImmediate(resolve));
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      // A WeakRef's target lives at least until the current job ends.
      await new Promise<void>((resolve) => setImmediate(resolve));
      gc();
      const alive = seen.filter((ref) => ref.deref() !== undefined).length;
      expect(alive, 'events reachable while the run sleeps').to.be.at.most(500);
      expect((await call(svc.url, 'POST', '/api/runs/many-1/cancel')).status).to.equal(200);
      expect((await svc.finished('many-1')).status).to.equal('failed');
    } finally {
      off();
    }
  });

  it('a duplicate active run_id is 409; cancel answers cancelling, then 409, unknown 404', async () => {
    await startRun({ workflow: 'slow', run_id: 'sleepy' });
    const dup = await call(svc.url, 'POST', '/api/run', { workflow: 'slow', run_id: 'sleepy' });
    expect(dup.status).to.equal(409);
    expect(dup.body).to.have.property('detail').that.is.a('string');
    const listed = await call(svc.url, 'GET', '/api/runs');
    expect((listed.body as Summary[])[0]).to.include({ run_id: 'sleepy', status: 'running' });

    const cancel = await call(svc.url, 'POST', '/api/runs/sleepy/cancel');
    expect(cancel.status).to.equal(200);
    expect(cancel.body).to.deep.equal({ run_id: 'sleepy', status: 'cancelling' });
    const record = await svc.finished('sleepy');
    expect(record.status).to.equal('failed');
    const again = await call(svc.url, 'POST', '/api/runs/sleepy/cancel');
    expect(again.status).to.equal(409);
    const unknown = await call(svc.url, 'POST', '/api/runs/never-ran/cancel');
    expect(unknown.status).to.equal(404);
  });

  it('GET /api/runs: newest first, limit, exact workflow filter, invalid limit 422', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      ids.push(await startRun({ workflow: 'test_deterministic', run_id: `seq-${n}` }));
      await svc.finished(`seq-${n}`);
    }
    ids.push(await startRun({ workflow: 'conditional_branching', run_id: 'cond-1' }));
    await svc.finished('cond-1');
    const all = (await call(svc.url, 'GET', '/api/runs')).body as Summary[];
    expect(all.map((r) => r.run_id)).to.deep.equal(['cond-1', 'seq-3', 'seq-2', 'seq-1']);
    const two = (await call(svc.url, 'GET', '/api/runs?limit=2')).body as Summary[];
    expect(two.map((r) => r.run_id)).to.deep.equal(['cond-1', 'seq-3']);
    const filtered = (await call(svc.url, 'GET', '/api/runs?workflow=test_deterministic&limit=2'))
      .body as Summary[];
    expect(filtered.map((r) => r.run_id)).to.deep.equal(['seq-3', 'seq-2']);
    const prefix = (await call(svc.url, 'GET', '/api/runs?workflow=test')).body as Summary[];
    expect(prefix).to.deep.equal([]);
    for (const limit of ['0', '-1', 'abc', '1.5', '1001']) {
      const res = await call(svc.url, 'GET', `/api/runs?limit=${limit}`);
      expect(res.status, limit).to.equal(422);
      expect((res.body as { detail: { loc: unknown[] }[] }).detail[0]?.loc).to.deep.equal([
        'query',
        'limit',
      ]);
    }
  });

  it('GET /api/runs/summary aggregates success, failures, durations, workflows and tokens', async () => {
    await startRun({ workflow: 'test_deterministic', run_id: 'ok-1' });
    await svc.finished('ok-1');
    await startRun({
      workflow: 'code_review',
      run_id: 'llm-1',
      input_data: { code: 'def f():\n  return 1\n' },
    });
    const llm = await svc.finished('llm-1');
    await startRun({ workflow: 'slow', run_id: 'slow-1' });
    await call(svc.url, 'POST', '/api/runs/slow-1/cancel');
    await svc.finished('slow-1');
    const res = await call(svc.url, 'GET', '/api/runs/summary');
    expect(res.status).to.equal(200);
    const body = res.body as Record<string, unknown>;
    const tokens = llm.steps.reduce((sum, s) => sum + (s.tokens_used?.total ?? 0), 0);
    expect(body).to.deep.include({
      total_runs: 3,
      success: 2,
      failed: 1,
      workflows: ['code_review', 'slow', 'test_deterministic'],
      tokens_30d: tokens,
    });
    expect(body.avg_duration_ms).to.be.a('number').greaterThan(0);
    const one = await call(svc.url, 'GET', '/api/runs/summary?workflow=slow');
    expect(one.body).to.deep.include({ total_runs: 1, success: 0, failed: 1, workflows: ['slow'] });
  });

  it('GET /api/runs/{filename} answers 404 for unknown runs and every traversal attempt', async () => {
    const runId = await startRun({ workflow: 'test_deterministic' });
    await svc.finished(runId);
    await writeFile(join(svc.root, 'secret.json'), JSON.stringify({ secret: true }));
    const attempts = [
      'unknown-run',
      'nothing.json',
      '..%2Fsecret.json',
      '%2E%2E%2Fsecret.json',
      '..%252Fsecret.json',
      '%2e%2e',
      '..',
      'a%00b.json',
      '%2Fetc%2Fpasswd',
      '%2Ftmp%2Fx.json',
      '..%5Csecret.json',
      '%EF%BC%8E%EF%BC%8E%EF%BC%8Fsecret.json',
      '%EF%BC%8E%EF%BC%8Ejson',
      'run%E2%80%8B.json',
    ];
    for (const attempt of attempts) {
      const res = await call(svc.url, 'GET', `/api/runs/${attempt}`);
      expect(res.status, attempt).to.equal(404);
      expect(res.body, attempt).to.have.property('detail');
      expect(res.text).not.to.include('secret');
    }
  });

  it('50 concurrent runs are all persisted and listed', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(svc.url, 'POST', '/api/run', { workflow: 'test_deterministic', run_id: `c-${i}` }),
      ),
    );
    expect(responses.map((r) => r.status)).to.deep.equal(Array(50).fill(200));
    const records = await Promise.all(responses.map((_, i) => svc.finished(`c-${i}`)));
    expect(records.every((r) => r.status === 'success')).to.equal(true);
    const files = (await readdir(svc.runsDir)).filter((f) => f.endsWith('.json'));
    expect(files).to.have.length(50);
    const list = (await call(svc.url, 'GET', '/api/runs?limit=100')).body as Summary[];
    expect(list.map((r) => r.run_id).sort()).to.deep.equal(
      Array.from({ length: 50 }, (_, i) => `c-${i}`).sort(),
    );
    expect(list.every((r) => r.status === 'success')).to.equal(true);
  });

  it('a new service over the same directories keeps the history', async () => {
    const runId = await startRun({ workflow: 'test_deterministic', run_id: 'before-restart' });
    await svc.finished(runId);
    const before = (await call(svc.url, 'GET', '/api/runs')).body as Summary[];
    const root = svc.root;
    await svc.close();
    const again = await startTestService({ root });
    try {
      const after = (await call(again.url, 'GET', '/api/runs')).body as Summary[];
      expect(after).to.deep.equal(before);
      const detail = await call(again.url, 'GET', '/api/runs/before-restart');
      expect(detail.status).to.equal(200);
      const summary = await call(again.url, 'GET', '/api/runs/summary');
      expect(summary.body).to.deep.include({ total_runs: 1, success: 1 });
    } finally {
      await again.dispose();
    }
  });

  it('POST /api/runs/{run_id}/resume: an interrupted run goes on from its file; 404 unknown, 409 not interrupted', async () => {
    const runId = await startRun({ workflow: 'test_deterministic', run_id: 'to-resume' });
    const done = await svc.finished(runId);
    expect(done.status).to.equal('success');
    // As a crash during its last step leaves it once marked (AGENTIC_RESUME=manual).
    const [file] = (await readdir(svc.runsDir)).filter((f) => f.endsWith('_to-resume.json'));
    const last = done.steps.length - 1;
    const interrupted = {
      ...done,
      status: 'failed',
      error: 'interrupted',
      final_output: null,
      end_time: null,
      steps: done.steps.map((step, i) =>
        i === last ? { ...step, status: 'failed', output: null, error: 'interrupted' } : step,
      ),
    };
    await writeFile(join(svc.runsDir, file as string), JSON.stringify(interrupted));

    const resumed = await call(svc.url, 'POST', '/api/runs/to-resume/resume');
    expect(resumed.status, resumed.text).to.equal(200);
    expect(resumed.body).to.deep.equal({ run_id: 'to-resume', status: 'running' });
    const record = await svc.finished('to-resume');
    expect(record.status, JSON.stringify(record.steps)).to.equal('success');
    expect(record.final_output).to.deep.equal(done.final_output);
    // The finished steps kept their records (times included; the event numbers are the new
    // run's); the last ran again.
    const withoutSeq = ({ start_seq: _s, end_seq: _e, ...rest }: (typeof done.steps)[number]) =>
      rest;
    expect(record.steps.slice(0, last).map(withoutSeq)).to.deep.equal(
      done.steps.slice(0, last).map(withoutSeq),
    );
    expect(record.steps[last]!.metadata.attempts).to.equal(2);
    // A client following the run sees one run: a workflow_start saying resumed, every step's
    // start and end (the finished ones from the file), the end.
    const sse = await openSse(`${svc.url}/api/runs/to-resume/stream`);
    await sse.frames.until((frames) => frames.some((f) => f.type === 'workflow_end'), 'the end');
    sse.abort();
    const streamed = sse.events();
    expect(streamed[0]).to.include({ type: 'workflow_start', resumed: true });
    expect(streamed.map((e) => ('step' in e ? `${e.type}:${e.step}` : e.type))).to.deep.equal([
      'workflow_start',
      ...done.steps.flatMap((s) => [`step_start:${s.step_name}`, `step_end:${s.step_name}`]),
      'workflow_end',
    ]);
    const detail = await call(svc.url, 'GET', '/api/runs/to-resume');
    const extra = (detail.body as { extra: Record<string, unknown> }).extra;
    expect(extra.workflow_hash).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(extra.resumes).to.have.length(1);
    expect((extra.resumes as Record<string, unknown>[])[0]).to.include({ reason: 'request' });

    const again = await call(svc.url, 'POST', '/api/runs/to-resume/resume');
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal({
      detail: 'run to-resume ended success; only an interrupted run resumes',
    });
    const unknown = await call(svc.url, 'POST', '/api/runs/nobody/resume');
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ detail: 'Run not found' });
    const active = await startRun({ workflow: 'slow', run_id: 'still-running' });
    const busy = await call(svc.url, 'POST', `/api/runs/${active}/resume`);
    expect(busy.status).to.equal(409);
    expect(busy.body).to.deep.equal({
      detail: 'run still-running is active; only an interrupted run resumes',
    });
  });

  it('a run interrupted by a crash is listed as failed after a restart', async () => {
    await startRun({ workflow: 'slow', run_id: 'crashed' });
    // The start record is durable in the process log at once; its file follows a moment later.
    let file: string | undefined;
    while (file === undefined) {
      [file] = (await readdir(svc.runsDir)).filter((f) => f.endsWith('.json'));
      if (file === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const running = await readFile(join(svc.runsDir, file), 'utf8');
    const root = svc.root;
    await svc.close();
    // Simulate the crash: the file still says running, and its owner (this process: the
    // service left the run to the next start) is gone.
    await writeFile(join(svc.runsDir, file), running);
    for (const name of await readdir(svc.runsDir))
      if (name.endsWith('.owner')) await rm(join(svc.runsDir, name));
    // Resume off: the run stays interrupted (POST /api/runs/{run_id}/resume is tested below).
    const again = await startTestService({ root, env: { AGENTIC_RESUME: 'manual' } });
    try {
      const list = (await call(again.url, 'GET', '/api/runs')).body as Summary[];
      expect(list[0]).to.include({ run_id: 'crashed', status: 'failed' });
    } finally {
      await again.dispose();
      await rm(root, { recursive: true, force: true });
    }
  });
});
