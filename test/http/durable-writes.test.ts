import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowEvent } from '../../src/generated/events.js';
import { writeFileAtomic } from '../../src/files/atomic-write.js';
import type { FileWriter } from '../../src/store/write-thread.js';
import { connectWs } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

/** Resolves once `condition()` holds, checking after each event-loop turn (no timed sleeps). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The real writer, failing end-of-run records with `code` while it is set. */
class EndRecordFault {
  code: string | undefined;
  readonly write: FileWriter = (path, data) => {
    if (this.code !== undefined && !data.includes('"status": "running"')) {
      const error = new Error(`${this.code}: simulated`) as NodeJS.ErrnoException;
      error.code = this.code;
      return Promise.reject(error);
    }
    return writeFileAtomic(path, data);
  };
}

interface Detail {
  detail: string;
  checks?: Record<string, { ok: boolean; detail?: string }>;
}

describe('durable end-of-run writes (HTTP, WebSocket)', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  const start = (writeFile?: FileWriter): Promise<TestService> =>
    startTestService({
      env: { AGENTIC_WRITE_RETRY_MAX_MS: '20' },
      ...(writeFile !== undefined ? { writeFile } : {}),
    });

  for (const code of ['ENOSPC', 'EROFS', 'EMFILE', 'ENOTDIR']) {
    it(`with end writes failing ${code}: no success on the API or WebSocket, readiness and POST /api/run 503, all written after recovery`, async () => {
      const fault = new EndRecordFault();
      fault.code = code;
      const s = (svc = await start(fault.write));
      const posted = await call(s.url, 'POST', '/api/run', {
        workflow: 'test_deterministic',
        run_id: 'dur-1',
      });
      expect(posted.status).to.equal(200);
      await until(() => s.runtime.writes().failing === 1);
      const ws = connectWs(`${s.url.replace('http', 'ws')}/ws/execution/dur-1`);
      await ws.events.until((events) => events.some((e) => e.type === 'step_end'), 'replay');

      const detail = await call(s.url, 'GET', '/api/runs/dur-1');
      expect(detail.status).to.equal(200);
      const record = detail.body as { status: string; extra: Record<string, unknown> };
      expect(record.status).to.equal('running');
      expect(record.extra.persistence).to.deep.include({ persisted: false, error: code });

      const ready = await call(s.url, 'GET', '/api/health/ready');
      expect(ready.status).to.equal(503);
      const readyBody = ready.body as Detail;
      expect(readyBody.checks?.run_writes).to.deep.equal({
        ok: false,
        detail: `1 run record(s) not yet written to the runs directory 'runs' (${code}); retrying`,
      });
      expect(ready.text).not.to.include(s.root);

      const refused = await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
      expect(refused.status).to.equal(503);
      expect((refused.body as Detail).detail).to.equal(
        `run files cannot be written to the runs directory (${code}); 1 run record(s) waiting; try again later`,
      );
      expect(refused.headers.get('retry-after')).to.equal('5');
      expect(refused.text).not.to.include(s.root);

      expect(ws.events.items.map((e) => e.type)).not.to.include('workflow_end');
      expect(s.runtime.isActive('dur-1')).to.equal(true);

      fault.code = undefined;
      const events = await ws.events.until(
        (items) => items.some((e) => e.type === 'workflow_end'),
        'workflow_end',
      );
      const end = events.find((e) => e.type === 'workflow_end') as WorkflowEvent & {
        status: string;
      };
      expect(end.status).to.equal('success');
      const files = (await readdir(s.runsDir)).filter((name) => name.endsWith('.json'));
      expect(files).to.have.length(1);
      const onDisk = JSON.parse(await readFile(join(s.runsDir, files[0]!), 'utf8')) as {
        status: string;
      };
      expect(onDisk.status).to.equal('success');
      expect((await call(s.url, 'GET', '/api/health/ready')).status).to.equal(200);
      const after = (await call(s.url, 'GET', '/api/runs/dur-1')).body as {
        status: string;
        extra: Record<string, unknown>;
      };
      expect(after.status).to.equal('success');
      expect(after.extra).not.to.have.property('persistence');
      // The socket stays open after the run; the client leaves.
      ws.ws.close();
      await ws.closed;
    });
  }

  it('with the runs directory replaced by a file mid-run: never success until the record is on disk', async () => {
    const s = (svc = await start());
    const ends: WorkflowEvent[] = [];
    const off = s.runtime.subscribe((event) => {
      // Replaced synchronously as the first step starts: the start record is on disk, the end
      // record can only fail (ENOTDIR), a fault root cannot bypass.
      if (event.type === 'step_start' && event.step === 'process') {
        rmSync(s.runsDir, { recursive: true, force: true });
        writeFileSync(s.runsDir, 'not a directory');
      }
      if (event.type === 'workflow_end') ends.push(event);
    });
    try {
      const posted = await call(s.url, 'POST', '/api/run', {
        workflow: 'test_deterministic',
        run_id: 'dur-file',
      });
      expect(posted.status).to.equal(200);
      await until(() => s.runtime.writes().failing === 1);
      expect(ends).to.deep.equal([]);

      const ready = await call(s.url, 'GET', '/api/health/ready');
      expect(ready.status).to.equal(503);
      const checks = (ready.body as Detail).checks!;
      expect(checks.runs_dir).to.deep.equal({
        ok: false,
        detail: "runs directory 'runs' is not a directory",
      });
      expect(checks.run_writes?.detail).to.include('(ENOTDIR)');
      expect(ready.text).not.to.include(s.root);
      expect(
        (await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic' })).status,
      ).to.equal(503);

      await rm(s.runsDir);
      await mkdir(s.runsDir);
      await until(() => ends.length === 1);
      expect(ends[0]).to.include({ status: 'success' });
      const files = await readdir(s.runsDir);
      expect(files).to.have.length(1);
      const onDisk = JSON.parse(await readFile(join(s.runsDir, files[0]!), 'utf8')) as {
        status: string;
      };
      expect(onDisk.status).to.equal('success');
    } finally {
      off();
      mkdirSync(s.runsDir, { recursive: true });
    }
  });

  it('with AGENTIC_WRITE_QUEUE_MAX records queued: readiness and POST /api/run 503 until the queue drains', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held: FileWriter = async (path, data) => {
      if (!data.includes('"status": "running"')) await gate;
      await writeFileAtomic(path, data);
    };
    const s = (svc = await startTestService({
      env: { AGENTIC_WRITE_QUEUE_MAX: '1' },
      writeFile: held,
    }));
    const done = s.finished('q-1');
    await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic', run_id: 'q-1' });
    await until(() => s.runtime.writes().pending === 1);
    const ready = await call(s.url, 'GET', '/api/health/ready');
    expect(ready.status).to.equal(503);
    expect((ready.body as Detail).checks?.run_writes).to.deep.equal({
      ok: false,
      detail: 'the run-file write queue is full (1 records waiting)',
    });
    const refused = await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
    expect(refused.status).to.equal(503);
    expect((refused.body as Detail).detail).to.equal(
      'the run-file write queue is full (1 records waiting); try again later',
    );
    release();
    expect((await done).status).to.equal('success');
    expect((await call(s.url, 'GET', '/api/health/ready')).status).to.equal(200);
  });

  it('refuses a run whose first record cannot be written with 503, naming no path', async () => {
    const failing: FileWriter = () => {
      const error = new Error('EROFS: simulated') as NodeJS.ErrnoException;
      error.code = 'EROFS';
      return Promise.reject(error);
    };
    const s = (svc = await start(failing));
    const refused = await call(s.url, 'POST', '/api/run', { workflow: 'test_deterministic' });
    expect(refused.status).to.equal(503);
    expect(refused.body).to.deep.equal({
      detail: 'cannot write the run file in the runs directory (EROFS)',
    });
    expect(s.runtime.activeRuns()).to.deep.equal([]);
  });

  it('readiness is 503 when the runs file system has less than AGENTIC_RUNS_MIN_FREE_MB free', async () => {
    const s = (svc = await startTestService({ env: { AGENTIC_RUNS_MIN_FREE_MB: '1000000000' } }));
    const ready = await call(s.url, 'GET', '/api/health/ready');
    expect(ready.status).to.equal(503);
    const check = (ready.body as Detail).checks?.runs_dir_space;
    expect(check?.ok).to.equal(false);
    expect(check?.detail).to.match(
      /^runs directory 'runs' has \d+ MiB free, below the 1000000000 MiB minimum$/,
    );
    expect((ready.body as Detail).checks?.runs_dir_write).to.deep.equal({ ok: true });
  });

  it('start-up removes temp files left by a killed writer and keeps the run files', async () => {
    const root = await mkdtemp(join(tmpdir(), 'agentic-stale-'));
    const runsDir = join(root, 'runs');
    await mkdir(runsDir, { recursive: true });
    // Temp files of a process that is gone (its token has no live owner file).
    await writeFile(join(runsDir, '.20240101T000000000Z_wf_r1.json.zz-0123abcd-1.tmp'), '');
    await writeFile(join(runsDir, '.20240101T000000000Z_wf_r2.json.zz-0123abcd-w2.tmp'), '{"r');
    await writeFile(join(runsDir, 'keep.json'), '{}');
    svc = await startTestService({ root });
    try {
      const names = (await readdir(runsDir)).filter((name) => !name.endsWith('.owner'));
      expect(names).to.deep.equal(['keep.json']);
    } finally {
      await svc.dispose();
      svc = undefined;
      await rm(root, { recursive: true, force: true });
    }
  });
});
