/**
 * Outbound provider credentials (spec: "a secret provider abstraction, environment backend by
 * default, file backend for mounted secrets"). Keys stay inside the provider's closure: they are
 * never part of the frozen Config, so logging the config cannot print them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Looks a credential up by its conventional variable name (`OPENAI_API_KEY`, ...). */
export interface SecretProvider {
  /** The value, or undefined when unset or empty. */
  get(name: string): string | undefined;
}

type Env = Record<string, string | undefined>;

/** Reads credentials from an environment record (pass `process.env` at the edge). */
export function createEnvSecretProvider(env: Env): SecretProvider {
  return {
    get(name) {
      const value = env[name]?.trim();
      return value === undefined || value === '' ? undefined : value;
    },
  };
}

const SECRET_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * Reads `<dir>/<NAME>` (Docker and Kubernetes mounted secrets), trailing whitespace dropped.
 * A missing file is "unset"; names other than `A-Z0-9_` are never looked up (no paths).
 */
export function createFileSecretProvider(dir: string): SecretProvider {
  return {
    get(name) {
      if (!SECRET_NAME.test(name)) return undefined;
      try {
        const value = readFileSync(join(dir, name), 'utf8').trim();
        return value === '' ? undefined : value;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
        throw error;
      }
    },
  };
}

/** Asks each backend in order; the first value found wins. */
export function chainSecretProviders(...providers: SecretProvider[]): SecretProvider {
  return {
    get(name) {
      for (const provider of providers) {
        const value = provider.get(name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}

/** The service's secrets: `AGENTIC_SECRETS_DIR` files first (when set), then the environment. */
export function createSecretProvider(env: Env, secretsDir: string | undefined): SecretProvider {
  const fromEnv = createEnvSecretProvider(env);
  return secretsDir === undefined
    ? fromEnv
    : chainSecretProviders(createFileSecretProvider(secretsDir), fromEnv);
}
