import { expect } from 'chai';
import { loadConfig } from '../../../src/config/index.js';
import { createLlmService, type LlmService } from '../../../src/llm/llm-service.js';
import {
  openAiAnswer,
  refusingPort,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

/**
 * Ollama is first in the shipped chains of tiers 1-3; on a machine without it every request
 * used to try it first (a refused connection, or a connect timeout on a remote OLLAMA_HOST).
 * Attempts are counted on the client side: a refused connection never reaches a server.
 */
describe('routing around a provider that does not answer (Ollama refusing on 127.0.0.1)', () => {
  let openai: FakeServer;
  let ollama: FakeServer | undefined;
  let downPort: number;
  let service: LlmService | undefined;
  let now: number;

  beforeEach(async () => {
    now = 1_000_000;
    openai = await startFakeServer((req, res) =>
      req.method === 'GET'
        ? sendJson(res, 200, { data: [{ id: 'gpt-x' }] })
        : sendJson(res, 200, openAiAnswer('from openai', { model: 'gpt-x' })),
    );
    downPort = await refusingPort();
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
    await Promise.all([openai.close(), ollama?.close()]);
    ollama = undefined;
  });

  const start = (env: Record<string, string> = {}): LlmService =>
    (service = createLlmService(
      loadConfig(
        {
          OPENAI_BASE_URL: `${openai.url}/v1`,
          OLLAMA_HOST: `http://127.0.0.1:${downPort}`,
          AGENTIC_MODEL_TIER_1: 'ollama:qwen2.5:3b,openai:gpt-x',
          AGENTIC_MODEL_TIER_2: 'ollama:qwen2.5:7b,openai:gpt-x',
          AGENTIC_LLM_BREAKER_COOLDOWN_SECONDS: '60',
          ...env,
        },
        '/tmp',
      ).llm,
      { now: () => now },
    ));

  /** Ollama comes up on the port that refused until now. */
  const ollamaBack = async (): Promise<void> => {
    ollama = await startFakeServer(
      (req, res) =>
        req.method === 'GET'
          ? sendJson(res, 200, { models: [{ name: 'qwen2.5:3b' }, { name: 'qwen2.5:7b' }] })
          : sendJson(
              res,
              200,
              openAiAnswer('from ollama', { model: (req.body as { model: string }).model }),
            ),
      { port: downPort },
    );
  };

  /** One tier request: the model that answered and every candidate the router called. */
  const ask = async (tier: number): Promise<{ model: string; tried: string[] }> => {
    const tried: string[] = [];
    const answer = await service!.router.complete({
      tier,
      system: '',
      prompt: 'hi',
      signal: new AbortController().signal,
      onAttempt: (model) => {
        tried.push(model);
        return () => undefined;
      },
    });
    return { model: answer.model, tried };
  };

  it('a provider the probe found unreachable is skipped by every tier until its cool-down, tried once then, and used again once it answers', async () => {
    const llm = start();
    const probe = await llm.probe();
    expect(probe.unavailable_reasons.ollama).to.match(/ECONNREFUSED/);
    for (const tier of [1, 2, 1, 2]) {
      expect(await ask(tier)).to.deep.equal({ model: 'openai:gpt-x', tried: ['openai:gpt-x'] });
    }
    now += 60_000;
    expect((await ask(1)).tried, 'one trial after the cool-down').to.deep.equal([
      'ollama:qwen2.5:3b',
      'openai:gpt-x',
    ]);
    expect((await ask(2)).tried, 'the failed trial opened it again').to.deep.equal([
      'openai:gpt-x',
    ]);
    await ollamaBack();
    expect((await ask(1)).tried, 'still within the new cool-down').to.deep.equal(['openai:gpt-x']);
    now += 60_000;
    expect(await ask(2)).to.deep.equal({
      model: 'ollama:qwen2.5:7b',
      tried: ['ollama:qwen2.5:7b'],
    });
    expect(await ask(1)).to.deep.equal({
      model: 'ollama:qwen2.5:3b',
      tried: ['ollama:qwen2.5:3b'],
    });
  });

  it('a re-probe that finds the provider answering again lets it be tried at once', async () => {
    const llm = start();
    await llm.probe();
    expect((await ask(1)).tried).to.deep.equal(['openai:gpt-x']);
    await ollamaBack();
    const probe = await llm.probe();
    expect(probe.available_providers).to.include('ollama');
    expect(await ask(1)).to.deep.equal({
      model: 'ollama:qwen2.5:3b',
      tried: ['ollama:qwen2.5:3b'],
    });
  });

  it('without a probe, refused connections open the circuit of the provider (all its models) after the threshold', async () => {
    start({ AGENTIC_LLM_BREAKER_THRESHOLD: '2' });
    expect((await ask(1)).tried).to.deep.equal(['ollama:qwen2.5:3b', 'openai:gpt-x']);
    expect((await ask(2)).tried).to.deep.equal(['ollama:qwen2.5:7b', 'openai:gpt-x']);
    for (const tier of [1, 2, 1, 2]) {
      expect((await ask(tier)).tried, `tier ${tier}`).to.deep.equal(['openai:gpt-x']);
    }
  });

  it('the error of a tier with nothing left says the provider is unreachable and when it is retried', async () => {
    const llm = start({ AGENTIC_MODEL_TIER_3: 'ollama:qwen2.5:14b' });
    await llm.probe();
    let message = '';
    try {
      await ask(3);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.match(
      /^no model of tier 3 can be used: ollama:qwen2\.5:14b: ollama unreachable \(ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+; retry in 60 s\)$/,
    );
  });
});
