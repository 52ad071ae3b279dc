import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createInProcessMemoryStore,
  MemoryStoreError,
  namespacedMemory,
  openFileMemoryStore,
  type FileMemoryStore,
  type NamespaceableMemoryStore,
} from '../../../src/memory/index.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const WRITER = new URL('../../fixtures/memory/writer.ts', import.meta.url).pathname;

let dir: string;
const opened: FileMemoryStore[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memory-'));
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function fileStore(): Promise<FileMemoryStore> {
  const store = await openFileMemoryStore(join(dir, 'memory.json'));
  opened.push(store);
  return store;
}

const kinds: [string, () => Promise<NamespaceableMemoryStore>][] = [
  ['in-process store', () => Promise.resolve(createInProcessMemoryStore())],
  ['file store', fileStore],
];

for (const [name, make] of kinds) {
  describe(`memory: ${name}`, () => {
    it('gets, sets, deletes and clears JSON values', async () => {
      const store = await make();
      expect(await store.get('a')).to.equal(undefined);
      await store.set('a', { x: [1, 2] });
      await store.set('b', 'text');
      expect(await store.get('a')).to.deep.equal({ x: [1, 2] });
      expect(await store.delete('a')).to.equal(true);
      expect(await store.delete('a')).to.equal(false);
      await store.clear();
      expect(await store.get('b')).to.equal(undefined);
    });

    it('returns copies: mutating a value read back does not change the store', async () => {
      const store = await make();
      await store.set('a', { n: 1 });
      const value = (await store.get('a')) as { n: number };
      value.n = 2;
      expect(await store.get('a')).to.deep.equal({ n: 1 });
    });

    it('searches serialized values by substring, in key order, 10 hits by default', async () => {
      const store = await make();
      for (let i = 0; i < 12; i += 1)
        await store.set(`k${String(i).padStart(2, '0')}`, { note: `alpha ${i}` });
      await store.set('other', 'beta');
      const hits = await store.search('alpha');
      expect(hits.map((hit) => hit.key)).to.deep.equal(
        Array.from({ length: 10 }, (_, i) => `k${String(i).padStart(2, '0')}`),
      );
      expect(await store.search('"note":"alpha 11"', 5)).to.deep.equal([
        { key: 'k11', value: { note: 'alpha 11' } },
      ]);
      const bad = await store.search('a', 0).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(bad).to.be.instanceOf(MemoryStoreError);
    });

    it('rejects values that are not JSON with a memory store error', async () => {
      const store = await make();
      const error = await store
        .set('f', () => 1)
        .then(
          () => undefined,
          (failure: unknown) => failure,
        );
      expect(error).to.be.instanceOf(MemoryStoreError);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const second = await store.set('c', cyclic).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(second).to.be.instanceOf(MemoryStoreError);
    });

    it('keeps namespaces apart and shares the shared one', async () => {
      const store = await make();
      const a = namespacedMemory(store, 'workflow:a');
      const b = namespacedMemory(store, 'workflow:b');
      await a.set('k', 'from a');
      await b.set('k', 'from b');
      expect(await a.get('k')).to.equal('from a');
      expect(await b.search('from')).to.deep.equal([{ key: 'k', value: 'from b' }]);
      await a.clear();
      expect(await a.get('k')).to.equal(undefined);
      expect(await b.get('k')).to.equal('from b');
    });
  });
}

describe('memory: file store persistence', () => {
  it('loses no update under 200 concurrent sets and reloads them all', async () => {
    const store = await fileStore();
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.set(`key${i}`, i)));
    await store.close();
    opened.length = 0;
    const reopened = await fileStore();
    for (let i = 0; i < 200; i += 1) expect(await reopened.get(`key${i}`)).to.equal(i);
    const file = JSON.parse(await readFile(join(dir, 'memory.json'), 'utf8')) as {
      entries: Record<string, number>;
    };
    expect(Object.keys(file.entries)).to.have.length(200);
  });

  it('refuses a second writer while the first is open', async () => {
    await fileStore();
    const error = await openFileMemoryStore(join(dir, 'memory.json')).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(MemoryStoreError);
  });

  it('refuses a file that is not a memory store file', async () => {
    await writeFile(join(dir, 'memory.json'), '{"not":"a store"}');
    const error = await openFileMemoryStore(join(dir, 'memory.json')).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(MemoryStoreError);
  });

  it('survives a writer killed with SIGKILL mid-write: the file holds a durable value', async () => {
    const path = join(dir, 'memory.json');
    const child = spawn(process.execPath, ['--import', TSX, WRITER, path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acknowledged = 0;
    let buffered = '';
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() as string;
        for (const line of lines) acknowledged = Number(line);
        // Killed while writes are in flight: the writer never waits between sets.
        if (acknowledged >= 20) resolve();
      });
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    expect(await exited).to.equal(null);
    // The dead writer's lock is taken over; the file parses and holds an acknowledged value.
    const store = await fileStore();
    const value = (await store.get('counter')) as { n: number };
    expect(value.n).to.be.at.least(acknowledged);
  });
});
