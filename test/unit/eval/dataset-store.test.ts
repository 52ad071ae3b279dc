import { expect } from 'chai';
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../../../src/errors.js';
import { JSON_WORKER_BYTES, type DatasetFileRead } from '../../../src/eval/dataset-store.js';
import { createDatasetCatalogue, sampleAt } from '../../../src/eval/datasets.js';
import { bigJsonl } from '../../fixtures/datasets.js';
import { rejection } from '../../support/rejection.js';

const FIXED_TIME = new Date('2026-01-01T00:00:00Z');

describe('dataset catalogue: how dataset files are read', () => {
  let root: string;
  let reads: DatasetFileRead[];
  const catalogue = (options: { maxFileBytes?: number } = {}) =>
    createDatasetCatalogue({
      evalDir: join(root, 'eval'),
      localDir: root,
      onFileRead: (read) => reads.push(read),
      ...options,
    });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentic-dataset-store-'));
    reads = [];
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('indexes a 15 MB JSONL once for 20 concurrent sample reads, then reads only the samples asked for', async () => {
    const text = bigJsonl(100_000);
    const path = join(root, 'big.jsonl');
    await writeFile(path, text);
    const datasets = catalogue();
    const indices = Array.from({ length: 20 }, (_, i) => i * 4_999);
    const samples = await Promise.all(
      indices.map(async (index) =>
        sampleAt(await datasets.get('local', 'big'), index, ['sample_index']),
      ),
    );
    expect(samples.map((s) => s.id)).to.deep.equal(
      indices.map((i) => `s${String(i).padStart(6, '0')}`),
    );
    const lineBytes = (i: number) => Buffer.byteLength(text.split('\n')[i]!);
    expect(reads.filter((r) => r.kind !== 'samples')).to.deep.equal([
      { path, kind: 'index', bytes: Buffer.byteLength(text) },
    ]);
    const sampleReads = reads.filter((r) => r.kind === 'samples');
    expect(sampleReads.map((r) => r.bytes).sort()).to.deep.equal(indices.map(lineBytes).sort());
    expect((await datasets.get('local', 'big')).sampleCount).to.equal(100_000);
    expect(reads.filter((r) => r.kind === 'index')).to.have.length(1);
  });

  it('parses a 15 MB JSON dataset once, in a worker, for 20 concurrent sample reads', async () => {
    const lines = bigJsonl(100_000).trim().split('\n');
    const text = `{"name": "Big", "compatible_workflows": ["w"], "samples": [${lines.join(',')}]}`;
    const path = join(root, 'bigjson.json');
    await writeFile(path, text);
    expect(Buffer.byteLength(text)).to.be.above(JSON_WORKER_BYTES);
    const datasets = catalogue();
    const indices = Array.from({ length: 20 }, (_, i) => i * 4_999);
    const samples = await Promise.all(
      indices.map(async (index) =>
        sampleAt(await datasets.get('local', 'bigjson'), index, ['sample_index']),
      ),
    );
    expect(samples.map((s) => s.id)).to.deep.equal(
      indices.map((i) => `s${String(i).padStart(6, '0')}`),
    );
    expect(reads).to.deep.equal([{ path, kind: 'whole', bytes: Buffer.byteLength(text) }]);
    const dataset = await datasets.get('local', 'bigjson');
    expect([dataset.name, dataset.compatibleWorkflows, dataset.sampleCount]).to.deep.equal([
      'Big',
      ['w'],
      100_000,
    ]);
    // A large file that is not JSON: the worker says so without quoting it.
    await writeFile(join(root, 'notjson.json'), `root:x:0:0 ${'y'.repeat(JSON_WORKER_BYTES)}`);
    expect((await rejection(datasets.get('local', 'notjson'), ValidationError)).message).to.equal(
      'dataset local/notjson cannot be read: not valid JSON',
    );
  });

  it('reads a file again only when its size or mtime changes', async () => {
    const path = join(root, 'small.jsonl');
    await writeFile(path, '{"id":"a"}\n{"id":"b"}\n');
    await utimes(path, FIXED_TIME, FIXED_TIME);
    const datasets = catalogue();
    expect((await datasets.get('local', 'small')).sampleCount).to.equal(2);
    // Same size, same mtime: the index is kept (one sample line fewer now, unseen).
    await writeFile(path, '{"id":"a"} {"id":"b"}\n');
    await utimes(path, FIXED_TIME, FIXED_TIME);
    expect((await datasets.get('local', 'small')).sampleCount).to.equal(2);
    expect(reads.filter((r) => r.kind === 'index')).to.have.length(1);
    await utimes(path, new Date(), new Date());
    const error = await rejection(datasets.get('local', 'small'), ValidationError);
    expect(error.message).to.equal(
      'dataset local/small cannot be read: line 1 is not valid JSON (at character 11)',
    );
    // The verdict is kept too: a bad file is not read again for every request.
    await rejection(datasets.get('local', 'small'), ValidationError);
    expect(reads.filter((r) => r.kind === 'index')).to.have.length(2);
  });

  it('says where eval_sets.json is not JSON, never what it holds', async () => {
    await mkdir(join(root, 'eval'));
    await writeFile(join(root, 'eval', 'eval_sets.json'), 'root:x:0:0:root:/root:/bin/bash\n');
    let message = '';
    await catalogue()
      .evalSets()
      .catch((error: Error) => (message = error.message));
    expect(message).to.equal('eval_sets.json is not valid JSON');
  });

  it('refuses a file over the byte bound before reading it', async () => {
    await writeFile(join(root, 'large.json'), JSON.stringify([{ text: 'x'.repeat(5000) }]));
    const size = (await stat(join(root, 'large.json'))).size;
    const error = await rejection(
      catalogue({ maxFileBytes: 4096 }).get('local', 'large'),
      ValidationError,
    );
    expect(error.details).to.deep.equal([
      {
        loc: ['dataset_id'],
        msg: `dataset local/large cannot be read: ${size} bytes, more than 4096 (AGENTIC_MAX_DATASET_BYTES)`,
        type: 'value_error.dataset',
      },
    ]);
    expect(reads).to.deep.equal([]);
  });
});
