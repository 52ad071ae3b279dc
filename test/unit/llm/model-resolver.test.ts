import { expect } from 'chai';
import { LlmError } from '../../../src/llm/llm-error.js';
import {
  createModelResolver,
  WELL_KNOWN_MODEL_PREFIXES,
  type ModelListings,
} from '../../../src/llm/model-resolver.js';
import { WRITTEN_MODEL_ID } from '../../../src/llm/model-id.js';
import { PROVIDER_NAMES } from '../../../src/llm/provider-set.js';
import chatRequest from '../../../schemas/api/chat-request.schema.json' with { type: 'json' };
import workflowSchema from '../../../schemas/workflow.schema.json' with { type: 'json' };
import { rejection } from '../../support/rejection.js';

describe('createModelResolver (model ids as people write them)', () => {
  let probes: number;
  let listings: ModelListings;
  let now: number;
  const resolver = (configured: string[] = ['openai', 'anthropic', 'ollama']) =>
    createModelResolver({
      known: PROVIDER_NAMES,
      configured: () => configured,
      probe: () => {
        probes++;
        return Promise.resolve(listings);
      },
      now: () => now,
    });
  beforeEach(() => {
    probes = 0;
    now = 0;
    listings = { openai: ['gpt-4.1-mini'], ollama: ['qwen2.5:7b', 'llama3:latest'] };
  });

  it('keeps a provider:model id of a known provider as it is, without a probe', async () => {
    const models = resolver();
    expect(await models.resolve('openai:gpt-4.1-mini')).to.equal('openai:gpt-4.1-mini');
    expect(await models.resolve('ollama:qwen2.5:7b')).to.equal('ollama:qwen2.5:7b');
    expect(await models.resolve('github:openai/gpt-4.1')).to.equal('github:openai/gpt-4.1');
    expect(probes).to.equal(0);
  });

  it('before any probe, resolves a bare id by its well-known prefix', async () => {
    const models = resolver();
    expect(await models.resolve('gpt-4o-mini')).to.equal('openai:gpt-4o-mini');
    expect(await models.resolve('o3-mini')).to.equal('openai:o3-mini');
    expect(await models.resolve('o1')).to.equal('openai:o1');
    expect(await models.resolve('o4-mini')).to.equal('openai:o4-mini');
    expect(await models.resolve('claude-3-5-haiku-latest')).to.equal(
      'anthropic:claude-3-5-haiku-latest',
    );
    expect(await models.resolve('gemini-2.0-flash')).to.equal('gemini:gemini-2.0-flash');
    expect(probes, 'a prefix needs no probe').to.equal(0);
    const providers = new Set(WELL_KNOWN_MODEL_PREFIXES.map((entry) => entry.provider));
    for (const provider of providers) expect(PROVIDER_NAMES).to.include(provider);
  });

  it('probes once for a bare id no prefix knows, then resolves it to the provider that lists it', async () => {
    const models = resolver();
    expect(await models.resolve('qwen2.5:7b')).to.equal('ollama:qwen2.5:7b');
    // llama3 is Ollama's llama3:latest; llama3:8b parses like provider "llama3" but is a name.
    expect(await models.resolve('llama3')).to.equal('ollama:llama3');
    expect(probes).to.equal(1);
    listings = { ...listings, ollama: ['llama3:8b'] };
    now = 61_000;
    expect(await models.resolve('llama3:8b')).to.equal('ollama:llama3:8b');
    expect(probes).to.equal(2);
  });

  it('a probe listing wins over a prefix: the provider that serves the model answers', async () => {
    const models = resolver(['github']);
    models.learn({ github: ['gpt-4o-mini'] });
    expect(await models.resolve('gpt-4o-mini')).to.equal('github:gpt-4o-mini');
    expect(await models.resolve('gpt-4.1')).to.equal('openai:gpt-4.1');
    expect(models.known('gpt-4o-mini')).to.equal('github:gpt-4o-mini');
  });

  it('an id nothing resolves is a not_found LlmError naming the configured providers', async () => {
    const models = resolver();
    const error = await rejection(models.resolve('mystery'));
    expect(error).to.be.instanceOf(LlmError);
    expect((error as LlmError).kind).to.equal('not_found');
    expect(error.message).to.equal(
      "model 'mystery' names no provider, and no configured provider lists it (configured: openai, anthropic, ollama); write it as provider:model (e.g. openai:mystery)",
    );
    // A second unknown id within a minute does not probe again.
    await rejection(models.resolve('mystery-2'));
    expect(probes).to.equal(1);
  });

  it('an unknown provider prefix says the provider is unknown and lists the known ones', async () => {
    const error = await rejection(resolver().resolve('nosuch:model'));
    expect((error as LlmError).kind).to.equal('not_found');
    expect(error.message).to.equal(
      "model 'nosuch:model': unknown provider 'nosuch' (the providers are openai, azure, github, anthropic, gemini, ollama; configured: openai, anthropic, ollama), and no configured provider lists a model of that name",
    );
    expect(error.message).to.not.include('API_KEY');
  });

  it('the chat request and a step pin take the same written model ids as the CLI', () => {
    expect(chatRequest.properties.model.pattern).to.equal(WRITTEN_MODEL_ID.source);
    const step = (
      workflowSchema as unknown as {
        $defs: { step: { properties: { model: { pattern: string } } } };
      }
    ).$defs.step;
    expect(step.properties.model.pattern).to.equal(WRITTEN_MODEL_ID.source);
    for (const id of ['gpt-4o-mini', 'openai:gpt-4.1', 'ollama:qwen2.5:7b', 'o1']) {
      expect(WRITTEN_MODEL_ID.test(id), id).to.equal(true);
    }
    for (const id of ['', 'gpt 4', 'openai:', ':gpt-4', ' gpt']) {
      expect(WRITTEN_MODEL_ID.test(id), id).to.equal(false);
    }
  });
});
