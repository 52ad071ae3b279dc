/** The LLM layer's settings, read from the environment by `loadConfig`. */
import type { SecretProvider } from './secrets.js';

export interface LlmSettings {
  /** Credentials (keys are looked up here, never copied into the config). */
  secrets: SecretProvider;
  /**
   * A variable of the config schema as resolved: its value (trimmed) when set, else its
   * default, else undefined. The provider descriptors read their settings (base URLs,
   * versions) through it by name. Throws for a name the schema does not declare (credentials
   * are read through `secrets`).
   */
  setting: (name: string) => string | undefined;
  /** Whether a variable of the config schema was set (not merely defaulted). */
  isSet: (name: string) => boolean;
  /** Tier → chain from `AGENTIC_MODEL_TIER_<N>`. */
  tierOverrides: Readonly<Record<string, readonly string[]>>;
  /** The chains file; undefined: the default location. */
  modelsFile: string | undefined;
  /** The price table (`AGENTIC_PRICES_FILE`, else the shipped agents/prices.yaml). */
  pricesFile: string;
  breakerThreshold: number;
  breakerCooldownMs: number;
  retryAfterMaxMs: number;
  maxInFlight: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  probeTimeoutMs: number;
  /** Largest answer body, in bytes (`AGENTIC_LLM_MAX_ANSWER_BYTES`). */
  maxAnswerBytes: number;
  /** Longest a stream goes without a data event, in ms (`AGENTIC_LLM_IDLE_TIMEOUT_MS`). */
  idleTimeoutMs: number;
  /** Longest one model call takes, request to last byte, in ms (`AGENTIC_LLM_CALL_TIMEOUT_MS`). */
  callTimeoutMs: number;
}

/** `provider:model`, the provider a lowercase word, the model anything non-empty. */
export const MODEL_ID = /^[a-z][a-z0-9_-]*:\S+$/;

const TIER_VARIABLE = /^AGENTIC_MODEL_TIER_(\d+)$/;

/**
 * `AGENTIC_MODEL_TIER_<N>` for every N in the environment (not only the ones in the schema):
 * each a comma list of model ids. Problems name the variable.
 */
export function readTierOverrides(
  env: Record<string, string | undefined>,
  problems: string[],
): Record<string, readonly string[]> {
  const tiers: Record<string, readonly string[]> = {};
  for (const [name, value] of Object.entries(env)) {
    const match = TIER_VARIABLE.exec(name);
    if (match === null || value === undefined || value.trim() === '') continue;
    const tier = Number(match[1]);
    if (tier < 1 || tier > 5) {
      problems.push(`${name}: tiers are 1 to 5`);
      continue;
    }
    const ids = value
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== '');
    const bad = ids.filter((id) => !MODEL_ID.test(id));
    if (bad.length > 0) {
      problems.push(
        `${name}=${JSON.stringify(value)}: ${bad.join(', ')} is not a provider:model id (e.g. openai:gpt-4.1-mini, ollama:qwen2.5:7b)`,
      );
      continue;
    }
    tiers[String(tier)] = Object.freeze(ids);
  }
  return tiers;
}
