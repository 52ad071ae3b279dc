import { expect } from 'chai';
import { loadConfig } from '../../../src/config/index.js';
import { createProviderSet, type ProviderSet } from '../../../src/llm/provider-set.js';
import {
  createHashingEmbedder,
  createVectorMemoryStore,
  embedderFor,
  MemoryStoreError,
} from '../../../src/memory/index.js';
import { toolsOptionsFromConfig } from '../../../src/tools/index.js';
import { sendJson, startFakeServer, type FakeServer } from '../../fixtures/llm/fake-server.js';

/**
 * Two-dimensional "embeddings" (not normalized: the embedder normalizes): texts about cats point
 * one way, about cars the opposite way, anything else at right angles to cats.
 */
function vectorOf(text: string): number[] {
  if (/cat|kitten|feline/i.test(text)) return [3, -3];
  if (/car|engine|motor/i.test(text)) return [-2, 2];
  return [-5, -5];
}

const KEY = 'sk-embed-secretsecretsecret';

describe('memory: embeddings from the configured provider (fake servers on 127.0.0.1)', () => {
  let server: FakeServer;
  let providers: ProviderSet | undefined;
  beforeEach(async () => {
    server = await startFakeServer((request, res) => {
      const body = request.body as {
        input?: string[];
        requests?: { model: string; content: { parts: { text: string }[] } }[];
      };
      if (request.path === '/v1/embeddings') {
        // Answered out of order: the provider puts them back by `index`.
        const data = (body.input ?? []).map((text, index) => ({
          object: 'embedding',
          index,
          embedding: vectorOf(text),
        }));
        return sendJson(res, 200, { object: 'list', data: data.reverse(), model: 'emb' });
      }
      if (request.path === '/v1beta/models/text-embedding-004:batchEmbedContents') {
        return sendJson(res, 200, {
          embeddings: (body.requests ?? []).map((entry) => ({
            values: vectorOf(entry.content.parts[0]!.text),
          })),
        });
      }
      return sendJson(res, 500, { error: { message: 'boom' } });
    });
  });
  afterEach(async () => {
    await providers?.close();
    providers = undefined;
    await server.close();
  });

  const settings = (env: Record<string, string>) => loadConfig({ AGENTIC_NO_LLM: '1', ...env }).llm;

  async function rankWith(setting: string): Promise<string[]> {
    const store = createVectorMemoryStore({ embed: embedderFor(setting, providers!) });
    await store.set('pet', 'my kitten sleeps all day');
    await store.set('garage', 'the motor needs oil');
    await store.set('other', 'nothing relevant here');
    return (await store.search('feline')).map((hit) => hit.key);
  }

  it('OpenAI-compatible: POST /v1/embeddings {model, input} (Ollama / local servers by base URL)', async () => {
    providers = createProviderSet(settings({ OPENAI_BASE_URL: `${server.url}/v1` }));
    // "feline" shares no word with any entry: only the provider's vectors can find the kitten.
    expect(await rankWith('openai:text-embedding-3-small')).to.deep.equal(['pet']);
    const request = server.requests.find((r) => r.path === '/v1/embeddings')!;
    expect(request.method).to.equal('POST');
    expect(request.body).to.deep.equal({
      model: 'text-embedding-3-small',
      // The store embeds an entry's serialized JSON value.
      input: ['"my kitten sleeps all day"'],
    });
  });

  it('Gemini: batchEmbedContents with x-goog-api-key', async () => {
    providers = createProviderSet(
      settings({ GEMINI_API_KEY: KEY, GEMINI_BASE_URL: server.url, OLLAMA_HOST: server.url }),
    );
    expect(await rankWith('gemini:text-embedding-004')).to.deep.equal(['pet']);
    const request = server.requests[0]!;
    expect(request.path).to.equal('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(request.headers['x-goog-api-key']).to.equal(KEY);
    expect(request.body).to.deep.equal({
      requests: [
        {
          model: 'models/text-embedding-004',
          content: { parts: [{ text: '"my kitten sleeps all day"' }] },
        },
      ],
    });
  });

  it('Anthropic has no embeddings endpoint: the local hashing embedder, no request', async () => {
    providers = createProviderSet(
      settings({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url }),
    );
    const embed = embedderFor('anthropic:claude-x', providers);
    const hashing = createHashingEmbedder();
    expect([...(await embed('kitten'))]).to.deep.equal([...hashing('kitten')]);
    expect(server.requests).to.have.length(0);
  });

  it('fails a set with a MemoryStoreError when the endpoint fails, leaving the old value', async () => {
    providers = createProviderSet(settings({ OPENAI_BASE_URL: `${server.url}/broken` }));
    const store = createVectorMemoryStore({ embed: embedderFor('openai:emb', providers) });
    const error = await store.set('k', 'v').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(MemoryStoreError);
    expect((error as Error).message).to.match(/^embedding failed: /);
    expect(await store.get('k')).to.equal(undefined);
  });

  it('refuses at start-up a provider that is not configured, or a malformed setting', () => {
    providers = createProviderSet(settings({}));
    expect(() => embedderFor('gemini:text-embedding-004', providers!)).to.throw(
      /AGENTIC_MEMORY_EMBEDDINGS: provider 'gemini' is not configured \(GEMINI_API_KEY/,
    );
    expect(() => embedderFor('nonsense', providers!)).to.throw(/neither 'hashing' nor/);
  });

  it('AGENTIC_MEMORY_EMBEDDINGS picks the vector store; empty keeps substring search; not with AGENTIC_MEMORY_PATH', async () => {
    const hybrid = toolsOptionsFromConfig(
      loadConfig({ AGENTIC_NO_LLM: '1', AGENTIC_MEMORY_EMBEDDINGS: 'hashing' }),
    );
    expect(hybrid.memoryStore).to.not.equal(undefined);
    await hybrid.memoryStore!.set('deploy', 'deploy the service to production');
    expect((await hybrid.memoryStore!.search('deployment')).map((h) => h.key)).to.deep.equal([
      'deploy',
    ]);
    expect(toolsOptionsFromConfig(loadConfig({ AGENTIC_NO_LLM: '1' })).memoryStore).to.equal(
      undefined,
    );
    expect(() =>
      loadConfig({ AGENTIC_MEMORY_EMBEDDINGS: 'hashing', AGENTIC_MEMORY_PATH: '/tmp/m.json' }),
    ).to.throw(/AGENTIC_MEMORY_EMBEDDINGS: the vector store is in-process/);
    expect(() => loadConfig({ AGENTIC_MEMORY_EMBEDDINGS: 'not an id' })).to.throw(
      /AGENTIC_MEMORY_EMBEDDINGS/,
    );
  });
});
