import { expect } from 'chai';
import {
  createHashingEmbedder,
  createVectorMemoryStore,
  MemoryStoreError,
  namespacedMemory,
} from '../../../src/memory/index.js';

describe('memory: vector store', () => {
  it('ranks related entries first with the local hashing embedder and BM25', async () => {
    const store = createVectorMemoryStore();
    await store.set('deploy', 'deploy the service to production');
    await store.set('checklist', { note: 'deployment checklist for production servers' });
    await store.set('bread', 'banana bread recipe');
    const hits = await store.search('production deployment');
    expect(hits.map((hit) => hit.key).slice(0, 2)).to.have.members(['deploy', 'checklist']);
    // Unrelated text may still share hashed trigram buckets: it can appear, but only last.
    expect(hits.map((hit) => hit.key).indexOf('bread')).to.be.oneOf([-1, 2]);
    expect(hits.find((hit) => hit.key === 'checklist')?.value).to.deep.equal({
      note: 'deployment checklist for production servers',
    });
  });

  it('fuses the cosine and BM25 rankings by reciprocal rank fusion (k = 60)', async () => {
    // Cosine ranks b > c > a; BM25 ranks a > b (c has no query word). RRF: b = 1/62 + 1/61,
    // a = 1/61 + 1/63, c = 1/62, so b, a, c; either ranking alone would order them otherwise.
    const vectors: Record<string, [number, number]> = {
      query: [1, 0],
      a: [0.1, Math.sqrt(1 - 0.01)],
      b: [0.9, Math.sqrt(1 - 0.81)],
      c: [0.5, Math.sqrt(1 - 0.25)],
    };
    const embed = (text: string): Float32Array => {
      const id = /doc(\w)/.exec(text)?.[1] ?? 'query';
      return Float32Array.from(vectors[id] ?? [0, 0]);
    };
    const store = createVectorMemoryStore({ embed });
    await store.set('a', 'alpha alpha doca');
    await store.set('b', 'alpha docb filler filler filler filler');
    await store.set('c', 'docc');
    expect((await store.search('alpha')).map((hit) => hit.key)).to.deep.equal(['b', 'a', 'c']);
    expect((await store.search('alpha', 1)).map((hit) => hit.key)).to.deep.equal(['b']);
  });

  it('keeps the store contract: get, delete, clear, namespaces, bad limits', async () => {
    const store = createVectorMemoryStore();
    const ns = namespacedMemory(store, 'workflow:x');
    await ns.set('k', 'alpha beta');
    await store.set('other/k', 'alpha beta');
    expect(await ns.get('k')).to.equal('alpha beta');
    expect(await ns.search('alpha')).to.deep.equal([{ key: 'k', value: 'alpha beta' }]);
    expect(await ns.delete('k')).to.equal(true);
    await ns.clear();
    expect(await store.get('other/k')).to.equal('alpha beta');
    await store.clear();
    expect(await store.search('alpha')).to.deep.equal([]);
    const error = await store.search('a', 0).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(MemoryStoreError);
  });

  it('embeds deterministically into normalized vectors', () => {
    const embed = createHashingEmbedder();
    const a = embed('Hello world');
    expect([...a]).to.deep.equal([...embed('hello   WORLD')]);
    expect(a.reduce((sum, value) => sum + value * value, 0)).to.be.closeTo(1, 1e-5);
    expect([...embed('')].every((value) => value === 0)).to.equal(true);
  });
});
