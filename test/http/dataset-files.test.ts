import { expect } from 'chai';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bigJsonl } from '../fixtures/datasets.js';
import { call, startTestService, type TestService } from './harness.js';

const FIXED_TIME = new Date('2026-01-01T00:00:00Z');
/** What the outside file holds: no error may quote it. */
const SECRET = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n';

describe('evaluation dataset files over HTTP (big files, links, bounds)', () => {
  let service: TestService | undefined;
  let root: string;
  let local: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-ds-files-'));
    local = join(root, 'local');
    await mkdir(local);
  });
  afterEach(async () => {
    await service?.dispose();
    service = undefined;
    await rm(root, { recursive: true, force: true });
  });
  const start = async (env: Record<string, string> = {}) => {
    service = await startTestService({ env: { AGENTIC_LOCAL_DATASETS_DIR: local, ...env } });
    return service.url;
  };

  it('answers 20 concurrent sample requests on a 15 MB JSONL, health answering while they are in flight', async () => {
    await writeFile(join(local, 'big.jsonl'), bigJsonl(100_000));
    const url = await start();
    const done: string[] = [];
    const indices = Array.from({ length: 20 }, (_, i) => 99_999 - i * 5_000);
    const samples = indices.map(async (index) => {
      const res = await call(url, 'GET', `/api/eval/datasets/local/big/samples/${index}`);
      done.push(`sample ${index}`);
      return res;
    });
    const health = await fetch(`${url}/api/health`);
    done.push('health');
    expect(health.status).to.equal(200);
    const answers = await Promise.all(samples);
    expect(
      answers.map((a) => [a.status, (a.body as { sample_id: string }).sample_id]),
    ).to.deep.equal(indices.map((i) => [200, `s${String(i).padStart(6, '0')}`]));
    expect(
      (answers[0]?.body as { dataset_meta: { sample_count: number } }).dataset_meta.sample_count,
    ).to.equal(100_000);
    // The index is built in slices between which the loop serves other requests.
    expect(done.indexOf('health')).to.be.below(done.length - 1);
  }).timeout(120_000);

  it('reads a dataset once per size and mtime: a rewrite keeping both is served from the index', async () => {
    const path = join(local, 'kept.jsonl');
    await writeFile(path, '{"id":"a"}\n{"id":"b"}\n');
    await utimes(path, FIXED_TIME, FIXED_TIME);
    const url = await start();
    const count = async () => {
      const listed = await call(url, 'GET', '/api/eval/datasets');
      return (listed.body as { local: { sample_count: number }[] }).local[0]?.sample_count;
    };
    expect(await count()).to.equal(2);
    // Same size, same mtime: the index is kept (a real rewrite would change the mtime).
    await writeFile(path, '{"id":"a"} root:x:0:0\n');
    await utimes(path, FIXED_TIME, FIXED_TIME);
    expect(await count()).to.equal(2);
    await utimes(path, new Date(), new Date());
    const changed = await call(url, 'GET', '/api/eval/datasets/local/kept/samples');
    expect(changed.status).to.equal(422);
    expect(changed.body).to.deep.equal({
      detail: [
        {
          loc: ['dataset_id'],
          msg: 'dataset local/kept cannot be read: line 1 is not valid JSON (at character 11)',
          type: 'value_error.dataset',
        },
      ],
    });
  });

  it('refuses a dataset linked to a file outside its directory, and never quotes a file in an error', async () => {
    const outside = join(root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'passwd'), SECRET);
    await symlink(join(outside, 'passwd'), join(local, 'leak.json'));
    await symlink(join(outside, 'passwd'), join(local, 'leak2.jsonl'));
    await symlink('/etc/passwd', join(local, 'etc.json'));
    await writeFile(join(local, 'inside.jsonl'), '{"id":"in"}\n');
    await symlink('inside.jsonl', join(local, 'alias.jsonl'));
    await writeFile(join(local, 'notjson.json'), SECRET);
    await writeFile(join(local, 'notjson2.jsonl'), SECRET);
    const url = await start();
    const paths = [
      '/api/eval/datasets/local/leak/samples',
      '/api/eval/datasets/local/leak2/samples/0',
      '/api/eval/datasets/local/etc/samples',
      '/api/eval/datasets/sample-detail?dataset_source=local&dataset_id=leak&sample_index=0',
      '/api/workflows/test_deterministic/preview-dataset-inputs?dataset_source=local&dataset_id=etc',
    ];
    for (const path of paths) {
      const res = await call(url, 'GET', path);
      expect(res.status, path).to.equal(422);
      const id = /leak2|leak|etc/.exec(path)?.[0];
      expect(res.body, path).to.deep.equal({
        detail: [
          {
            loc: ['dataset_id'],
            msg: `dataset local/${id} cannot be read: it is a link to a file outside the datasets directory`,
            type: 'value_error.dataset',
          },
        ],
      });
    }
    const bad = await call(url, 'GET', '/api/eval/datasets/local/notjson/samples');
    const bad2 = await call(url, 'GET', '/api/eval/datasets/local/notjson2/samples');
    expect([bad.status, bad2.status]).to.deep.equal([422, 422]);
    expect((bad.body as { detail: { msg: string }[] }).detail[0]?.msg).to.match(
      /^dataset local\/notjson cannot be read: not valid JSON/,
    );
    expect((bad2.body as { detail: { msg: string }[] }).detail[0]?.msg).to.equal(
      'dataset local/notjson2 cannot be read: line 1 is not valid JSON',
    );
    const linked = await call(url, 'GET', '/api/eval/datasets/local/alias/samples/0');
    expect([linked.status, (linked.body as { sample_id: string }).sample_id]).to.deep.equal([
      200,
      'in',
    ]);
    const listed = await call(url, 'GET', '/api/eval/datasets');
    expect((listed.body as { local: { id: string }[] }).local.map((d) => d.id)).to.deep.equal([
      'alias',
      'inside',
    ]);
    for (const res of [bad, bad2, listed]) {
      expect(res.text).to.not.match(/root|daemon|bin\/bash/);
    }
  });

  it('refuses a dataset file over AGENTIC_MAX_DATASET_BYTES with 422', async () => {
    await writeFile(join(local, 'large.jsonl'), bigJsonl(20));
    const url = await start({ AGENTIC_MAX_DATASET_BYTES: '2048' });
    const res = await call(url, 'GET', '/api/eval/datasets/local/large/samples');
    expect(res.status).to.equal(422);
    expect((res.body as { detail: { msg: string }[] }).detail[0]?.msg).to.match(
      /^dataset local\/large cannot be read: \d+ bytes, more than 2048 \(AGENTIC_MAX_DATASET_BYTES\)$/,
    );
  });
});
