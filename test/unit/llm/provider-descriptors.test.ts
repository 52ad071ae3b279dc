import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import schema from '../../../schemas/config.schema.json' with { type: 'json' };
import { createEnvSecretProvider, loadConfig } from '../../../src/config/index.js';
import type { LlmSettings } from '../../../src/config/index.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import {
  missingReason,
  PROVIDER_DESCRIPTORS,
  providerVariables,
  type ProviderDescriptor,
} from '../../../src/llm/provider-descriptors.js';
import {
  createProviderSet,
  PROVIDER_NAMES,
  type ProviderSet,
} from '../../../src/llm/provider-set.js';
import { WELL_KNOWN_MODEL_PREFIXES } from '../../../src/llm/model-resolver.js';
import { LLM_VARIABLES_HINT } from '../../../src/llm/router-errors.js';
import { probeProviders } from '../../../src/llm/probe.js';
import { createLlmService } from '../../../src/llm/llm-service.js';
import {
  openAiAnswer,
  sendJson,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

const SCHEMA_VARIABLES = Object.keys(schema.properties);

describe('provider descriptors: one declaration per LLM provider', () => {
  it('declares every setting variable in the config schema and no credential there', async () => {
    const credentials = await readFile(
      new URL('../../../docs/configuration.md', import.meta.url),
      'utf8',
    );
    for (const descriptor of PROVIDER_DESCRIPTORS) {
      for (const variable of providerVariables(descriptor)) {
        if (variable.secret) {
          expect(SCHEMA_VARIABLES, `${descriptor.name}: ${variable.name}`).to.not.include(
            variable.name,
          );
          expect(credentials, `docs/configuration.md names ${variable.name}`).to.include(
            `\`${variable.name}\``,
          );
        } else {
          expect(SCHEMA_VARIABLES, `${descriptor.name}: ${variable.name}`).to.include(
            variable.name,
          );
        }
      }
    }
  });

  it('reads settings only of schema variables, never a credential', () => {
    const { llm } = loadConfig(
      { OPENAI_API_KEY: 'sk-secret', OLLAMA_HOST: ' http://127.0.0.1:1/ ' },
      '/tmp',
    );
    expect(llm.setting('OLLAMA_HOST')).to.equal('http://127.0.0.1:1/');
    expect(llm.isSet('OLLAMA_HOST')).to.equal(true);
    expect(llm.setting('GEMINI_BASE_URL')).to.equal('https://generativelanguage.googleapis.com');
    expect(llm.isSet('GEMINI_BASE_URL')).to.equal(false);
    expect(() => llm.setting('OPENAI_API_KEY')).to.throw(
      'OPENAI_API_KEY is not a variable of schemas/config.schema.json',
    );
    expect(() => llm.isSet('ACME_BASE_URL')).to.throw(/not a variable/);
  });

  it('derives the provider names, in probe order, and the well-known bare-name prefixes', () => {
    expect(PROVIDER_NAMES).to.deep.equal(PROVIDER_DESCRIPTORS.map((d) => d.name));
    expect(new Set(PROVIDER_NAMES).size).to.equal(PROVIDER_NAMES.length);
    for (const name of PROVIDER_NAMES) expect(name).to.match(/^[a-z][a-z0-9_-]*$/);
    expect(WELL_KNOWN_MODEL_PREFIXES).to.deep.equal(
      PROVIDER_DESCRIPTORS.flatMap((d) =>
        d.modelPrefixes.map((prefix) => ({ prefix, provider: d.name })),
      ),
    );
  });

  it('names in the "set X" hint every variable that configures a cloud provider', () => {
    for (const descriptor of PROVIDER_DESCRIPTORS) {
      const required = descriptor.requires.map((anyOf) => anyOf[0]?.name ?? '');
      if (descriptor.kind === 'cloud') expect(required, descriptor.name).to.not.be.empty;
      for (const name of required) expect(LLM_VARIABLES_HINT, descriptor.name).to.include(name);
    }
    expect(LLM_VARIABLES_HINT).to.include('OLLAMA_HOST');
  });

  it('says for each unconfigured provider every variable that would configure it', async () => {
    const set = createProviderSet(loadConfig({}, '/tmp').llm);
    try {
      const unconfigured = PROVIDER_DESCRIPTORS.filter((d) => d.requires.length > 0);
      expect(set.unconfigured()).to.deep.equal(
        unconfigured.map((d) => ({ name: d.name, reason: missingReason(d) })),
      );
      for (const descriptor of unconfigured) {
        for (const anyOf of descriptor.requires) {
          for (const variable of anyOf) {
            expect(set.missing(descriptor.name)).to.include(variable.name);
          }
        }
      }
      expect(set.configured().map((p) => p.name)).to.deep.equal(['ollama']);
    } finally {
      await set.close();
    }
  });

  it("builds each provider with the descriptor's listsEveryModel", async () => {
    const set = createProviderSet(
      loadConfig(
        {
          OPENAI_API_KEY: 'sk-a',
          AZURE_OPENAI_ENDPOINT: 'http://127.0.0.1:9',
          AZURE_OPENAI_API_KEY: 'az-a',
          GITHUB_TOKEN: 'ghp_a',
          ANTHROPIC_API_KEY: 'sk-ant-a',
          GOOGLE_API_KEY: 'AIza-a',
        },
        '/tmp',
      ).llm,
    );
    try {
      expect(set.configured().map((p) => [p.name, p.listsEveryModel === true])).to.deep.equal(
        PROVIDER_DESCRIPTORS.map((d) => [d.name, d.listsEveryModel]),
      );
    } finally {
      await set.close();
    }
  });

  describe('a new provider declared by one descriptor', () => {
    let server: FakeServer;
    let set: ProviderSet | undefined;
    beforeEach(async () => {
      server = await startFakeServer((req, res) =>
        req.method === 'GET'
          ? sendJson(res, 200, { data: [{ id: 'acme-small' }] })
          : sendJson(res, 200, openAiAnswer('hello from acme')),
      );
    });
    afterEach(async () => {
      await set?.close();
      set = undefined;
      await server.close();
    });

    const acme: ProviderDescriptor = {
      name: 'acme',
      displayName: 'Acme AI',
      kind: 'cloud',
      docs: 'OpenAI-compatible chat completions.',
      requires: [[{ name: 'ACME_API_KEY', secret: true }]],
      settings: ['ACME_BASE_URL'],
      listsEveryModel: true,
      modelPrefixes: ['acme-'],
      hintRank: 7,
      create: ({ http, key, setting, listsEveryModel }) => {
        const base = setting('ACME_BASE_URL');
        return createOpenAiCompatibleProvider({
          name: 'acme',
          http,
          chatUrl: () => `${base}/chat/completions`,
          modelsUrl: `${base}/models`,
          headers: { authorization: `Bearer ${key ?? ''}` },
          listsEveryModel,
        });
      },
    };
    const settings = (env: Record<string, string>): LlmSettings => {
      const base = loadConfig({}, '/tmp').llm;
      return {
        ...base,
        secrets: createEnvSecretProvider(env),
        setting: (name) => (name === 'ACME_BASE_URL' ? `${server.url}/v1/` : base.setting(name)),
        isSet: (name) => name === 'ACME_BASE_URL' || base.isSet(name),
      };
    };

    it('is configured by its key, chats, and is probed, with no other edit', async () => {
      set = createProviderSet(settings({ ACME_API_KEY: 'acme-key-1' }), undefined, [
        ...PROVIDER_DESCRIPTORS,
        acme,
      ]);
      const answer = await set.get('acme')!.chat({
        model: 'acme-small',
        messages: [{ role: 'user', content: 'hi' }],
        signal: new AbortController().signal,
      });
      expect(answer.text).to.equal('hello from acme');
      expect(server.requests[0]!.path).to.equal('/v1/chat/completions');
      expect(server.requests[0]!.headers.authorization).to.equal('Bearer acme-key-1');
      const probe = await probeProviders({
        providers: { configured: () => [set!.get('acme')!], unconfigured: () => [] },
        chains: { '1': ['acme:acme-small'] },
      });
      expect(probe.models).to.deep.equal({ acme: ['acme-small'] });
      expect(probe.tier_defaults).to.deep.equal({ '1': 'acme:acme-small' });
    });

    it('serves a tier chain and a bare model name through the LLM service', async () => {
      const service = createLlmService(
        {
          ...settings({ ACME_API_KEY: 'acme-key-1' }),
          tierOverrides: { '1': ['acme:acme-small'] },
        },
        { descriptors: [acme] },
      );
      try {
        const request = { system: 's', prompt: 'p', signal: new AbortController().signal };
        const byTier = await service.router.complete({ ...request, tier: 1 });
        expect(byTier.text).to.equal('hello from acme');
        expect(server.requests.at(-1)!.body).to.deep.include({ model: 'acme-small' });
        await service.router.complete({ ...request, tier: 2, model: 'acme-large' });
        expect(server.requests.at(-1)!.body).to.deep.include({ model: 'acme-large' });
        expect((await service.probe()).available_providers).to.deep.equal(['acme']);
      } finally {
        await service.close();
      }
    });

    it('says which variable to set when its key is missing', () => {
      set = createProviderSet(settings({}), undefined, [...PROVIDER_DESCRIPTORS, acme]);
      expect(set.get('acme')).to.equal(undefined);
      expect(set.missing('acme')).to.equal('ACME_API_KEY not set');
      expect(set.unconfigured().at(-1)).to.deep.equal({
        name: 'acme',
        reason: 'ACME_API_KEY not set',
      });
    });
  });
});
