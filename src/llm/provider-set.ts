/**
 * The providers configured by their variables (docs/llm.md), built from the descriptor table
 * (provider-descriptors.ts): which are usable, and for the others which variable to set. Each
 * provider gets its own keep-alive HTTP client, its key registered for scrubbing.
 */
import type { LlmSettings } from '../config/llm-settings.js';
import {
  createHttpClient,
  type HttpClient,
  type HttpClientOptions,
  type HttpTimeouts,
} from './http.js';
import {
  missingReason,
  PROVIDER_DESCRIPTORS,
  type ProviderDescriptor,
  type ProviderName,
} from './provider-descriptors.js';
import type { Provider } from './types.js';

export type { ProviderName } from './provider-descriptors.js';

/** Every provider name the runtime knows, in probe order. */
export const PROVIDER_NAMES: readonly ProviderName[] = PROVIDER_DESCRIPTORS.map((d) => d.name);

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
  | 'setting'
  | 'isSet'
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
  descriptors: readonly ProviderDescriptor[] = PROVIDER_DESCRIPTORS,
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
  const setting = (name: string): string => {
    const value = settings.setting(name);
    if (value === undefined) throw new Error(`${name} has no value (a provider setting needs one)`);
    return value.replace(/\/+$/, '');
  };
  const providers = new Map<string, Provider>();
  const missing = new Map<string, string>();

  for (const descriptor of descriptors) {
    const configured = descriptor.requires.every((anyOf) =>
      anyOf.some((variable) =>
        variable.secret
          ? settings.secrets.get(variable.name) !== undefined
          : settings.isSet(variable.name),
      ),
    );
    if (!configured) {
      missing.set(descriptor.name, missingReason(descriptor));
      continue;
    }
    const key = descriptor.requires
      .flat()
      .filter((variable) => variable.secret)
      .map((variable) => settings.secrets.get(variable.name))
      .find((value) => value !== undefined);
    providers.set(
      descriptor.name,
      descriptor.create({
        http: http(descriptor.name, key),
        key,
        setting,
        listsEveryModel: descriptor.listsEveryModel,
      }),
    );
  }

  const names = descriptors.map((descriptor) => descriptor.name);
  return {
    get: (name) => providers.get(name),
    configured: () => names.flatMap((name) => providers.get(name) ?? []),
    missing: (name) => missing.get(name),
    unconfigured: () =>
      names.flatMap((name) => {
        const reason = missing.get(name);
        return reason === undefined ? [] : [{ name, reason }];
      }),
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}
