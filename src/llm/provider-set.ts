/**
 * The providers configured by the conventional variables (docs/llm.md): which are
 * usable, and for the others which variable to set. Each provider gets its own keep-alive
 * HTTP client, its key registered for scrubbing.
 */
import type { LlmSettings } from '../config/llm-settings.js';
import {
  createHttpClient,
  type HttpClient,
  type HttpClientOptions,
  type HttpTimeouts,
} from './http.js';
import { createAnthropicProvider } from './providers/anthropic.js';
import { createGeminiProvider } from './providers/gemini.js';
import { createOpenAiCompatibleProvider, readOpenAiModels } from './providers/openai.js';
import type { Provider } from './types.js';

/** Every provider name the runtime knows, in probe order. */
export const PROVIDER_NAMES = [
  'openai',
  'azure',
  'github',
  'anthropic',
  'gemini',
  'ollama',
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface ProviderSet {
  /** A configured provider by name. */
  get(name: string): Provider | undefined;
  /** Configured providers, in probe order. */
  configured(): Provider[];
  /** Why a provider is not configured (`OPENAI_API_KEY not set`); undefined when it is (or unknown). */
  missing(name: string): string | undefined;
  /** Every provider that is not configured, with its reason. */
  unconfigured(): { name: string; reason: string }[];
  /** Closes the HTTP pools. */
  close(): Promise<void>;
}

type Settings = Pick<
  LlmSettings,
  | 'secrets'
  | 'openaiBaseUrl'
  | 'openaiBaseUrlSet'
  | 'anthropicBaseUrl'
  | 'geminiBaseUrl'
  | 'azureEndpoint'
  | 'azureApiVersion'
  | 'githubModelsBaseUrl'
  | 'ollamaHost'
  | 'connectTimeoutMs'
  | 'headersTimeoutMs'
  | 'bodyTimeoutMs'
  | 'idleTimeoutMs'
  | 'callTimeoutMs'
  | 'maxAnswerBytes'
>;

/**
 * Builds the providers whose variables are set; `pace` paces their answers' body chunks (see
 * {@link HttpClientOptions.pace}).
 */
export function createProviderSet(
  settings: Settings,
  pace?: HttpClientOptions['pace'],
): ProviderSet {
  const timeouts: HttpTimeouts = {
    connectMs: settings.connectTimeoutMs,
    headersMs: settings.headersTimeoutMs,
    bodyMs: settings.bodyTimeoutMs,
    idleMs: settings.idleTimeoutMs,
    callMs: settings.callTimeoutMs,
  };
  const clients: HttpClient[] = [];
  const http = (provider: string, key: string | undefined): HttpClient => {
    const client = createHttpClient({
      provider,
      timeouts,
      maxAnswerBytes: settings.maxAnswerBytes,
      secrets: key === undefined ? [] : [key],
      ...(pace === undefined ? {} : { pace }),
    });
    clients.push(client);
    return client;
  };
  const secret = (name: string): string | undefined => settings.secrets.get(name);
  const providers = new Map<string, Provider>();
  const missing = new Map<string, string>();

  const openaiKey = secret('OPENAI_API_KEY');
  if (openaiKey !== undefined || settings.openaiBaseUrlSet) {
    const base = settings.openaiBaseUrl;
    providers.set(
      'openai',
      createOpenAiCompatibleProvider({
        name: 'openai',
        http: http('openai', openaiKey),
        chatUrl: () => `${base}/chat/completions`,
        modelsUrl: `${base}/models`,
        embeddingsUrl: () => `${base}/embeddings`,
        headers: openaiKey === undefined ? {} : { authorization: `Bearer ${openaiKey}` },
        listsEveryModel: true,
      }),
    );
  } else missing.set('openai', 'OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) not set');

  const azureKey = secret('AZURE_OPENAI_API_KEY');
  const endpoint = settings.azureEndpoint;
  if (azureKey !== undefined && endpoint !== undefined) {
    const version = encodeURIComponent(settings.azureApiVersion);
    providers.set(
      'azure',
      createOpenAiCompatibleProvider({
        name: 'azure',
        http: http('azure', azureKey),
        chatUrl: (deployment) =>
          `${endpoint}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${version}`,
        modelsUrl: `${endpoint}/openai/models?api-version=${version}`,
        embeddingsUrl: (deployment) =>
          `${endpoint}/openai/deployments/${encodeURIComponent(deployment)}/embeddings?api-version=${version}`,
        headers: { 'api-key': azureKey },
      }),
    );
  } else missing.set('azure', 'AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY not set');

  const githubToken = secret('GITHUB_TOKEN');
  if (githubToken !== undefined) {
    const base = settings.githubModelsBaseUrl;
    providers.set(
      'github',
      createOpenAiCompatibleProvider({
        name: 'github',
        http: http('github', githubToken),
        chatUrl: () => `${base}/chat/completions`,
        embeddingsUrl: () => `${base}/embeddings`,
        // GitHub Models lists its catalogue beside the inference path.
        modelsUrl: base.endsWith('/inference')
          ? `${base.slice(0, -'/inference'.length)}/catalog/models`
          : `${base}/models`,
        readModels: (answer) =>
          Array.isArray(answer) ? readOpenAiModels({ data: answer }) : readOpenAiModels(answer),
        headers: { authorization: `Bearer ${githubToken}` },
      }),
    );
  } else missing.set('github', 'GITHUB_TOKEN not set');

  const anthropicKey = secret('ANTHROPIC_API_KEY');
  if (anthropicKey !== undefined) {
    providers.set(
      'anthropic',
      createAnthropicProvider({
        http: http('anthropic', anthropicKey),
        baseUrl: settings.anthropicBaseUrl,
        apiKey: anthropicKey,
      }),
    );
  } else missing.set('anthropic', 'ANTHROPIC_API_KEY not set');

  const geminiKey = secret('GEMINI_API_KEY') ?? secret('GOOGLE_API_KEY');
  if (geminiKey !== undefined) {
    providers.set(
      'gemini',
      createGeminiProvider({
        http: http('gemini', geminiKey),
        baseUrl: settings.geminiBaseUrl,
        apiKey: geminiKey,
      }),
    );
  } else missing.set('gemini', 'GEMINI_API_KEY (or GOOGLE_API_KEY) not set');

  // Ollama needs no credentials: it is always configured (the probe says whether it answers).
  const ollama = settings.ollamaHost;
  providers.set(
    'ollama',
    createOpenAiCompatibleProvider({
      name: 'ollama',
      http: http('ollama', undefined),
      chatUrl: () => `${ollama}/v1/chat/completions`,
      embeddingsUrl: () => `${ollama}/v1/embeddings`,
      modelsUrl: `${ollama}/api/tags`,
      listsEveryModel: true,
      readModels: (answer) => {
        const models = (answer as { models?: { name?: unknown }[] } | null)?.models;
        return Array.isArray(models)
          ? models.map((m) => m.name).filter((n): n is string => typeof n === 'string')
          : [];
      },
      headers: {},
    }),
  );

  return {
    get: (name) => providers.get(name),
    configured: () => PROVIDER_NAMES.flatMap((name) => providers.get(name) ?? []),
    missing: (name) => missing.get(name),
    unconfigured: () =>
      PROVIDER_NAMES.flatMap((name) => {
        const reason = missing.get(name);
        return reason === undefined ? [] : [{ name, reason }];
      }),
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}
