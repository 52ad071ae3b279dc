/**
 * The LLM providers, one declaration each. A descriptor names the provider (its model-id
 * prefix), the variables that configure it, whether its model list names every model it
 * serves, the bare-name prefixes that are plainly its models, and how its client is built.
 * Derived from this table: the provider set (which are configured, and for the others which
 * variable to set), `PROVIDER_NAMES`, the resolver's well-known prefixes, the "set X" hint of
 * errors, and the provider list of docs/llm.md (`npm run gen`). Adding a provider is one
 * descriptor here, its client module (or an OpenAI-compatible factory call), and its setting
 * variables in schemas/config.schema.json (a test checks they are there).
 *
 * Variables are named here and read in src/config: credentials through the secret provider,
 * settings (base URLs, versions) as the config schema resolved them, default included.
 */
import type { HttpClient } from './http.js';
import { createAnthropicProvider } from './providers/anthropic.js';
import { createGeminiProvider } from './providers/gemini.js';
import { createOpenAiCompatibleProvider, readOpenAiModels } from './providers/openai.js';
import type { Provider } from './types.js';

/** A variable a provider reads. */
export interface ProviderVariable {
  readonly name: string;
  /**
   * A credential: read through the secret provider (`AGENTIC_SECRETS_DIR`, then the
   * environment), never part of the config schema. Otherwise a variable of the config schema.
   */
  readonly secret: boolean;
  /** Said after the name where it is an alternative (`for a local server`). */
  readonly note?: string;
}

/** Cloud providers need credentials; local ones run on the user's machine. */
export const PROVIDER_KINDS = ['cloud', 'local'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** What a descriptor's factory is given. */
export interface ProviderContext {
  /** The provider's own keep-alive client; its credential is registered for scrubbing. */
  http: HttpClient;
  /** The first credential of `requires` found, or undefined. */
  key: string | undefined;
  /** A setting variable as resolved (its default when unset), trailing slashes dropped. */
  setting: (name: string) => string;
  /** The descriptor's {@link ProviderDescriptor.listsEveryModel}. */
  listsEveryModel: boolean;
}

export interface ProviderDescriptor {
  /** The provider's name: the prefix of its model ids (`openai:gpt-4.1-mini`). */
  readonly name: string;
  readonly displayName: string;
  readonly kind: ProviderKind;
  /** One line for docs/llm.md: the protocol and its endpoints. */
  readonly docs: string;
  /**
   * Conditions that configure it, all of them; each met when any of its variables is set (a
   * credential, or a setting set explicitly). None: always configured (the probe says whether
   * it answers).
   */
  readonly requires: readonly (readonly ProviderVariable[])[];
  /** Setting variables it reads besides (base URLs, versions), each with a schema default. */
  readonly settings: readonly string[];
  /**
   * Its model list names every model it serves, so after a probe a tier chain skips the models
   * it does not list (see {@link Provider.listsEveryModel}).
   */
  readonly listsEveryModel: boolean;
  /** Bare model names that are plainly its models (`claude-`), for resolution before a probe. */
  readonly modelPrefixes: readonly string[];
  /** Its place in the "set X" hint of errors (most used first). */
  readonly hintRank: number;
  /** Builds its client; kept a function so a provider module may be loaded on demand. */
  readonly create: (context: ProviderContext) => Provider;
}

const secret = (name: string): ProviderVariable => ({ name, secret: true });

const bearer = (key: string | undefined): Record<string, string> =>
  key === undefined ? {} : { authorization: `Bearer ${key}` };

/** Every provider the runtime knows, in probe order. */
export const PROVIDER_DESCRIPTORS = [
  {
    name: 'openai',
    displayName: 'OpenAI',
    kind: 'cloud',
    docs: 'chat completions `POST {base}/chat/completions`, SSE with `stream_options.include_usage`; `OPENAI_BASE_URL` alone (no key) for a local vLLM / LM Studio / llama.cpp server.',
    requires: [
      [
        secret('OPENAI_API_KEY'),
        { name: 'OPENAI_BASE_URL', secret: false, note: 'for a local server' },
      ],
    ],
    settings: [],
    listsEveryModel: true,
    modelPrefixes: ['gpt-', 'chatgpt-', 'o1', 'o3', 'o4', 'text-embedding-3'],
    hintRank: 1,
    create: ({ http, key, setting, listsEveryModel }) => {
      const base = setting('OPENAI_BASE_URL');
      return createOpenAiCompatibleProvider({
        name: 'openai',
        http,
        chatUrl: () => `${base}/chat/completions`,
        modelsUrl: `${base}/models`,
        embeddingsUrl: () => `${base}/embeddings`,
        headers: bearer(key),
        listsEveryModel,
      });
    },
  },
  {
    name: 'azure',
    displayName: 'Azure OpenAI',
    kind: 'cloud',
    docs: 'the same, `POST {endpoint}/openai/deployments/{model}/chat/completions?api-version=` with `api-key`; the model is the deployment name.',
    requires: [
      [{ name: 'AZURE_OPENAI_ENDPOINT', secret: false }],
      [secret('AZURE_OPENAI_API_KEY')],
    ],
    settings: ['AZURE_OPENAI_API_VERSION'],
    listsEveryModel: false,
    modelPrefixes: [],
    hintRank: 4,
    create: ({ http, key, setting, listsEveryModel }) => {
      const endpoint = setting('AZURE_OPENAI_ENDPOINT');
      const version = encodeURIComponent(setting('AZURE_OPENAI_API_VERSION'));
      const deployment = (name: string): string =>
        `${endpoint}/openai/deployments/${encodeURIComponent(name)}`;
      return createOpenAiCompatibleProvider({
        name: 'azure',
        http,
        chatUrl: (name) => `${deployment(name)}/chat/completions?api-version=${version}`,
        modelsUrl: `${endpoint}/openai/models?api-version=${version}`,
        embeddingsUrl: (name) => `${deployment(name)}/embeddings?api-version=${version}`,
        headers: key === undefined ? {} : { 'api-key': key },
        listsEveryModel,
      });
    },
  },
  {
    name: 'github',
    displayName: 'GitHub Models',
    kind: 'cloud',
    docs: 'the same on GitHub Models (its catalogue beside the inference path for the probe).',
    requires: [[secret('GITHUB_TOKEN')]],
    settings: ['GITHUB_MODELS_BASE_URL'],
    listsEveryModel: false,
    modelPrefixes: [],
    hintRank: 5,
    create: ({ http, key, setting, listsEveryModel }) => {
      const base = setting('GITHUB_MODELS_BASE_URL');
      return createOpenAiCompatibleProvider({
        name: 'github',
        http,
        chatUrl: () => `${base}/chat/completions`,
        embeddingsUrl: () => `${base}/embeddings`,
        // GitHub Models lists its catalogue beside the inference path.
        modelsUrl: base.endsWith('/inference')
          ? `${base.slice(0, -'/inference'.length)}/catalog/models`
          : `${base}/models`,
        readModels: (answer) =>
          Array.isArray(answer) ? readOpenAiModels({ data: answer }) : readOpenAiModels(answer),
        headers: bearer(key),
        listsEveryModel,
      });
    },
  },
  {
    name: 'anthropic',
    displayName: 'Anthropic',
    kind: 'cloud',
    docs: 'Messages `POST /v1/messages` (typed SSE events, `tool_use`/`tool_result` blocks; `max_tokens` 4096 when not given).',
    requires: [[secret('ANTHROPIC_API_KEY')]],
    settings: ['ANTHROPIC_BASE_URL'],
    listsEveryModel: false,
    modelPrefixes: ['claude-'],
    hintRank: 2,
    create: ({ http, key, setting }) =>
      createAnthropicProvider({ http, baseUrl: setting('ANTHROPIC_BASE_URL'), apiKey: key ?? '' }),
  },
  {
    name: 'gemini',
    displayName: 'Google Gemini',
    kind: 'cloud',
    docs: '`generateContent` / `streamGenerateContent?alt=sse` (`functionCall`, `responseMimeType` for JSON).',
    requires: [[secret('GEMINI_API_KEY'), secret('GOOGLE_API_KEY')]],
    settings: ['GEMINI_BASE_URL'],
    listsEveryModel: false,
    modelPrefixes: ['gemini-'],
    hintRank: 3,
    create: ({ http, key, setting }) =>
      createGeminiProvider({ http, baseUrl: setting('GEMINI_BASE_URL'), apiKey: key ?? '' }),
  },
  {
    name: 'ollama',
    displayName: 'Ollama',
    kind: 'local',
    docs: "Ollama's OpenAI endpoint `{host}/v1`, its `/api/tags` for the probe.",
    requires: [],
    settings: ['OLLAMA_HOST'],
    listsEveryModel: true,
    modelPrefixes: [],
    hintRank: 6,
    create: ({ http, setting, listsEveryModel }) => {
      const host = setting('OLLAMA_HOST');
      return createOpenAiCompatibleProvider({
        name: 'ollama',
        http,
        chatUrl: () => `${host}/v1/chat/completions`,
        embeddingsUrl: () => `${host}/v1/embeddings`,
        modelsUrl: `${host}/api/tags`,
        listsEveryModel,
        readModels: (answer) => {
          const models = (answer as { models?: { name?: unknown }[] } | null)?.models;
          return Array.isArray(models)
            ? models.map((m) => m.name).filter((n): n is string => typeof n === 'string')
            : [];
        },
        headers: {},
      });
    },
  },
] as const satisfies readonly ProviderDescriptor[];

/** A provider's name (`openai`, `anthropic`, ...). */
export type ProviderName = (typeof PROVIDER_DESCRIPTORS)[number]['name'];

/** Every variable a descriptor reads: its conditions', then its settings. */
export function providerVariables(descriptor: ProviderDescriptor): ProviderVariable[] {
  return [
    ...descriptor.requires.flat(),
    ...descriptor.settings.map((name) => ({ name, secret: false })),
  ];
}

/** Why an unconfigured provider is not configured: `GEMINI_API_KEY (or GOOGLE_API_KEY) not set`. */
export function missingReason(descriptor: ProviderDescriptor): string {
  const conditions = descriptor.requires.map(([first, ...others]) => {
    const alternatives = others.map((v) => (v.note === undefined ? v.name : `${v.name} ${v.note}`));
    return `${first?.name ?? ''}${alternatives.length === 0 ? '' : ` (or ${alternatives.join(' or ')})`}`;
  });
  return `${conditions.join(' and ')} not set`;
}

/**
 * What configures each provider, for the "set X" hint: the first variable of each condition
 * (`AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_API_KEY`), a provider with none its first setting.
 */
export function variablesHint(descriptors: readonly ProviderDescriptor[]): string {
  const items = [...descriptors]
    .sort((a, b) => a.hintRank - b.hintRank)
    .flatMap((descriptor) => {
      const names =
        descriptor.requires.length > 0
          ? descriptor.requires.flatMap((anyOf) => anyOf[0]?.name ?? [])
          : descriptor.settings.slice(0, 1);
      return names.length === 0 ? [] : [names.join(' + ')];
    });
  const last = items.pop();
  const list = items.length === 0 ? (last ?? '') : `${items.join(', ')} or ${last ?? ''}`;
  return `set ${list} (or AGENTIC_NO_LLM=1 for placeholder answers)`;
}
