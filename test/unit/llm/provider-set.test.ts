import { expect } from 'chai';
import { loadConfig } from '../../../src/config/index.js';
import { createProviderSet, type ProviderSet } from '../../../src/llm/provider-set.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

describe('createProviderSet: Azure OpenAI, GitHub Models, Ollama and local servers', () => {
  let server: FakeServer;
  let set: ProviderSet | undefined;

  beforeEach(async () => {
    server = await startFakeServer((req, res) =>
      req.method === 'GET'
        ? sendJson(res, 200, { data: [{ id: 'm' }] })
        : sendJson(res, 200, openAiAnswer('ok')),
    );
  });
  afterEach(async () => {
    await set?.close();
    set = undefined;
    await server.close();
  });

  const providers = (env: Record<string, string>) =>
    (set = createProviderSet(loadConfig({ OLLAMA_HOST: server.url, ...env }, '/tmp').llm));
  const ask = (provider: string, model: string) =>
    set!.get(provider)!.chat({
      model,
      messages: [{ role: 'user', content: 'x' }],
      signal: new AbortController().signal,
    });

  it('Azure: deployment URL with api-version and the api-key header', async () => {
    providers({
      AZURE_OPENAI_ENDPOINT: `${server.url}/`,
      AZURE_OPENAI_API_KEY: 'az-key-123456',
      AZURE_OPENAI_API_VERSION: '2024-10-21',
    });
    await ask('azure', 'my deploy');
    const req = server.requests[0]!;
    expect(req.path).to.equal(
      '/openai/deployments/my%20deploy/chat/completions?api-version=2024-10-21',
    );
    expect(req.headers['api-key']).to.equal('az-key-123456');
    expect(req.headers.authorization).to.equal(undefined);
  });

  it('GitHub Models: bearer GITHUB_TOKEN on the inference URL', async () => {
    providers({ GITHUB_TOKEN: 'ghp_test', GITHUB_MODELS_BASE_URL: server.url });
    await ask('github', 'openai/gpt-4.1-mini');
    expect(server.requests[0]!.path).to.equal('/chat/completions');
    expect(server.requests[0]!.headers.authorization).to.equal('Bearer ghp_test');
    expect(server.requests[0]!.body).to.deep.include({ model: 'openai/gpt-4.1-mini' });
  });

  it('Ollama: its OpenAI endpoint under /v1, no credentials; a local server by OPENAI_BASE_URL without a key', async () => {
    providers({ OPENAI_BASE_URL: `${server.url}/v1/` });
    await ask('ollama', 'qwen2.5:7b');
    await ask('openai', 'local-model');
    expect(server.requests.map((r) => r.path)).to.deep.equal([
      '/v1/chat/completions',
      '/v1/chat/completions',
    ]);
    expect(server.requests[0]!.body).to.deep.include({ model: 'qwen2.5:7b' });
    expect(server.requests[1]!.headers.authorization).to.equal(undefined);
  });
});
