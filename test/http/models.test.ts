import { expect } from 'chai';
import { createSseParser } from '../../src/llm/sse-parser.js';
import {
  openAiChunks,
  refusingPort,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../fixtures/llm/fake-server.js';
import { call, startTestService, type TestService } from './harness.js';

/** POSTs a chat request and collects its SSE frames. */
async function chat(
  base: string,
  body: unknown,
  onFrame?: (frame: Record<string, unknown>, controller: AbortController) => void,
): Promise<{ status: number; contentType: string | null; frames: Record<string, unknown>[] }> {
  const controller = new AbortController();
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const frames: Record<string, unknown>[] = [];
  const parser = createSseParser();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      for (const event of parser.push(chunk)) {
        const frame = JSON.parse(event.data) as Record<string, unknown>;
        frames.push(frame);
        onFrame?.(frame, controller);
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  }
  return { status: response.status, contentType: response.headers.get('content-type'), frames };
}

describe('GET /api/models/probe and POST /api/chat', () => {
  let openai: FakeServer;
  let ollama: FakeServer;
  let anthropic: FakeServer;
  let azure: FakeServer;
  let service: TestService | undefined;

  beforeEach(async () => {
    [openai, ollama, anthropic, azure] = await Promise.all([
      startFakeServer(),
      startFakeServer(),
      startFakeServer(),
      startFakeServer(),
    ]);
    openai.handle((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [{ id: 'gpt-x' }] });
      return sendSse(
        res,
        openAiChunks('Hello from the fake, ünïcode ✓', {
          model: 'gpt-x',
          parts: 5,
          usage: { prompt: 7, completion: 6 },
        }),
      );
    });
    ollama.handle((req, res) => sendJson(res, 200, { models: [{ name: 'qwen2.5:7b' }] }));
    anthropic.handle((_req, res) =>
      sendJson(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      }),
    );
    azure.handle(() => undefined);
  });
  afterEach(async () => {
    await service?.dispose();
    service = undefined;
    await Promise.all([openai, ollama, anthropic, azure].map((s) => s.close()));
  });

  const start = (env: Record<string, string> = {}) =>
    startTestService({
      env: {
        AGENTIC_NO_LLM: '0',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        OPENAI_API_KEY: 'sk-test-key-0123456789abcdef',
        OLLAMA_HOST: ollama.url,
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef',
        AZURE_OPENAI_ENDPOINT: azure.url,
        AZURE_OPENAI_API_KEY: 'azure-key-0123456789',
        AGENTIC_LLM_PROBE_TIMEOUT_MS: '300',
        AGENTIC_MODEL_TIER_1: 'ollama:qwen2.5:7b',
        AGENTIC_MODEL_TIER_2: 'ollama:not-pulled,openai:gpt-x',
        AGENTIC_MODEL_TIER_3: 'gemini:g,anthropic:claude-x',
        ...env,
      },
    }).then((s) => (service = s));

  it('probes every configured provider in parallel without spending tokens', async () => {
    const { url } = await start();
    const started = Date.now();
    const { status, body } = await call(url, 'GET', '/api/models/probe');
    expect(Date.now() - started, 'in parallel: one timeout, not several').to.be.below(1500);
    expect(status).to.equal(200);
    expect(body).to.deep.include({
      available_providers: ['openai', 'ollama'],
      unavailable_providers: ['azure', 'anthropic', 'github', 'gemini'],
      unavailable_reasons: {
        azure: 'no answer within 300 ms',
        anthropic: 'anthropic: HTTP 401: invalid x-api-key',
        github: 'GITHUB_TOKEN not set',
        gemini: 'GEMINI_API_KEY (or GOOGLE_API_KEY) not set',
      },
      models: { openai: ['gpt-x'], ollama: ['qwen2.5:7b'] },
    });
    expect((body as { tier_defaults: Record<string, string> }).tier_defaults).to.deep.include({
      '1': 'ollama:qwen2.5:7b',
      '2': 'openai:gpt-x',
    });
    expect((body as { tier_defaults: Record<string, string> }).tier_defaults).to.not.have.property(
      '3',
    );
    expect((body as { skipped_models: unknown }).skipped_models).to.deep.equal({
      '2': [{ model: 'ollama:not-pulled', reason: 'not listed by ollama' }],
      '4': [{ model: 'openai:gpt-4.1', reason: 'not listed by openai' }],
      '5': [{ model: 'openai:o3', reason: 'not listed by openai' }],
    });
    for (const server of [openai, ollama, anthropic, azure]) {
      expect(server.requests.every((r) => r.method === 'GET')).to.equal(true);
    }
    expect(anthropic.requests.at(-1)?.path).to.equal('/v1/models');
    expect(ollama.requests.at(-1)?.path).to.equal('/api/tags');
    expect(JSON.stringify(body)).to.not.include('sk-');
  });

  it('streams a tier request: route frames, a token per chunk, done with usage', async () => {
    // Ollama lists the model but fails the chat (its fake answers every request with its list).
    const { url } = await start({ AGENTIC_MODEL_TIER_2: 'ollama:qwen2.5:7b,openai:gpt-x' });
    const { status, contentType, frames } = await chat(url, {
      tier: 2,
      temperature: 0.3,
      messages: [
        { role: 'system', content: 'Be nice.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(status).to.equal(200);
    expect(contentType).to.match(/^text\/event-stream/);
    expect(frames[0]).to.deep.equal({
      type: 'route',
      requested_tier: 2,
      model: 'ollama:qwen2.5:7b',
    });
    expect(frames[1]).to.deep.equal({ type: 'route', requested_tier: 2, model: 'openai:gpt-x' });
    const tokens = frames.filter((f) => f.type === 'token');
    expect(tokens.length).to.be.greaterThan(1);
    expect(tokens.map((f) => f.delta).join('')).to.equal('Hello from the fake, ünïcode ✓');
    expect(frames.at(-1)).to.deep.equal({
      type: 'done',
      model: 'openai:gpt-x',
      usage: { input: 7, output: 6, total: 13 },
      cost_usd: null,
      finish_reason: 'stop',
    });
    const sent = openai.requests.find((r) => r.method === 'POST')?.body as Record<string, unknown>;
    expect(sent).to.deep.include({
      model: 'gpt-x',
      temperature: 0.3,
      messages: [
        { role: 'system', content: 'Be nice.' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('chat skips the models the probe found unlisted, and a provider it found unreachable, on every request', async () => {
    const down = await refusingPort();
    const { url } = await start({
      OLLAMA_HOST: `http://127.0.0.1:${down}`,
      AGENTIC_MODEL_TIER_1: 'ollama:qwen2.5:7b,openai:gpt-4.1-nano,openai:gpt-x',
    });
    const probe = await call(url, 'GET', '/api/models/probe');
    expect((probe.body as { unavailable_reasons: Record<string, string> }).unavailable_reasons)
      .to.have.property('ollama')
      .that.matches(/ECONNREFUSED/);
    expect((probe.body as { skipped_models: unknown }).skipped_models).to.deep.include({
      '1': [{ model: 'openai:gpt-4.1-nano', reason: 'not listed by openai' }],
    });
    for (let i = 0; i < 4; i++) {
      const { frames } = await chat(url, { tier: 1, messages: [{ role: 'user', content: 'x' }] });
      expect(frames.filter((f) => f.type === 'route')).to.deep.equal([
        { type: 'route', requested_tier: 1, model: 'openai:gpt-x' },
      ]);
      expect(frames.at(-1)).to.deep.include({ type: 'done', model: 'openai:gpt-x' });
    }
    expect(openai.requests.filter((r) => r.method === 'POST')).to.have.length(4);
  });

  it('answers 422 for both or neither of model and tier, a bad tier, role, temperature or empty messages', async () => {
    const { url } = await start();
    const messages = [{ role: 'user', content: 'x' }];
    const bad: [unknown, string][] = [
      [{ messages, model: 'openai:gpt-x', tier: 2 }, 'Give exactly one of model or tier'],
      [{ messages }, 'Give exactly one of model or tier'],
      [{ messages, tier: 6 }, 'Input should be less than or equal to 5'],
      [{ messages, tier: 0 }, 'Input should be greater than or equal to 1'],
      [
        { messages: [{ role: 'robot', content: 'x' }], tier: 1 },
        'Input should be one of: system, user, assistant',
      ],
      [{ messages, tier: 1, temperature: 3 }, 'Input should be less than or equal to 2'],
      [{ messages: [], tier: 1 }, 'List should have at least 1 item'],
    ];
    for (const [body, msg] of bad) {
      const response = await call(url, 'POST', '/api/chat', body);
      expect(response.status, JSON.stringify(body)).to.equal(422);
      const details = (response.body as { detail: { msg: string }[] }).detail;
      expect(
        details.map((d) => d.msg),
        JSON.stringify(body),
      ).to.include(msg);
    }
  });

  it('a provider failure is HTTP 200 with one terminal error frame', async () => {
    const { url } = await start();
    const { status, frames } = await chat(url, {
      model: 'anthropic:claude-x',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(status).to.equal(200);
    expect(frames).to.have.length(1);
    expect(frames[0]).to.deep.include({ type: 'error', kind: 'auth_error' });
    expect(String(frames[0]!.error)).to.match(/anthropic: HTTP 401: invalid x-api-key/);
    expect(String(frames[0]!.error)).to.not.include('sk-ant');
  });

  it('a client that disconnects aborts the upstream request at once', async () => {
    openai.handle(async (req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [] });
      await sendSse(res, openAiChunks('first', { parts: 1 }).slice(0, 2), { end: false });
    });
    const { url } = await start();
    const closed = openai.clientClosed();
    await chat(
      url,
      { model: 'openai:gpt-x', messages: [{ role: 'user', content: 'x' }] },
      (frame, controller) => {
        if (frame.type === 'token') controller.abort();
      },
    );
    await closed;
  });

  it('resolves a bare model id to the provider whose probe lists it, or by its well-known prefix', async () => {
    openai.handle((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, { data: [{ id: 'local-llama' }] });
      return sendSse(res, openAiChunks('bare ok', { model: 'local-llama', parts: 2 }));
    });
    const { url } = await start();
    const listed = await chat(url, {
      model: 'local-llama',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(listed.status).to.equal(200);
    expect(listed.frames.at(-1)).to.deep.include({ type: 'done', model: 'openai:local-llama' });
    const prefixed = await chat(url, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(prefixed.frames.at(-1), JSON.stringify(prefixed.frames)).to.deep.include({
      type: 'done',
    });
    const posted = openai.requests
      .filter((r) => r.method === 'POST')
      .map((r) => (r.body as { model: string }).model);
    expect(posted).to.deep.equal(['local-llama', 'gpt-4o-mini']);
  });

  it('a bare model id nothing resolves is one in-band error frame naming the configured providers', async () => {
    const { url } = await start();
    const { status, frames } = await chat(url, {
      model: 'mystery-model',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(status).to.equal(200);
    expect(frames).to.have.length(1);
    expect(frames[0]).to.deep.include({ type: 'error', kind: 'not_found' });
    expect(frames[0]!.error).to.equal(
      "model 'mystery-model' names no provider, and no configured provider lists it (configured: openai, azure, anthropic, ollama); write it as provider:model (e.g. openai:mystery-model)",
    );
    expect(openai.requests.filter((r) => r.method === 'POST')).to.have.length(0);
  });

  it('an unknown provider prefix says so and lists the known providers, not API keys', async () => {
    const { url } = await start();
    const { status, frames } = await chat(url, {
      model: 'nosuch:model',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(status).to.equal(200);
    expect(frames).to.have.length(1);
    expect(frames[0]).to.deep.include({ type: 'error', kind: 'not_found' });
    expect(frames[0]!.error).to.equal(
      "model 'nosuch:model': unknown provider 'nosuch' (the providers are openai, azure, github, anthropic, gemini, ollama; configured: openai, azure, anthropic, ollama), and no configured provider lists a model of that name",
    );
    const white = await call(url, 'POST', '/api/chat', {
      model: 'gpt 4',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(white.status).to.equal(422);
  });

  it('in no-LLM mode answers with the placeholder', async () => {
    const { url } = await start({ AGENTIC_NO_LLM: '1' });
    const { frames } = await chat(url, { tier: 1, messages: [{ role: 'user', content: 'x' }] });
    // A tier request gets its route frame in no-LLM mode too (the spec's frame order).
    expect(frames.map((f) => f.type)).to.deep.equal(['route', 'token', 'done']);
    expect(frames[0]).to.deep.equal({ type: 'route', requested_tier: 1, model: 'placeholder' });
    expect(frames[1]).to.deep.include({
      delta: '[placeholder tier1 response: 1 prompt characters]',
    });
    expect(frames[2]).to.deep.include({ model: 'placeholder' });
  });
});
