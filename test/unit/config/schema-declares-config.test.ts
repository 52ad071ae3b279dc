import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import schema from '../../../schemas/config.schema.json' with { type: 'json' };
import { loadConfig, type Config } from '../../../src/config/index.js';
import { PROVIDER_DESCRIPTORS, providerVariables } from '../../../src/llm/provider-descriptors.js';

interface Property {
  type: 'string' | 'integer' | 'number' | 'boolean';
  default?: unknown;
  enum?: string[];
  minimum?: number;
  maximum?: number;
}

const PROPERTIES = schema.properties as Record<string, Property>;

/** A credential file in the secrets directory the test points AGENTIC_SECRETS_DIR at. */
const SECRET = 'AGENTIC_TEST_CREDENTIAL';

/** Values a pattern-checked variable takes (the schema's `pattern`), or whose meaning is a path. */
const SPECIAL: Record<string, string> = {
  AGENTIC_RATE_LIMIT_DEFAULT: '7/second',
  AGENTIC_MEMORY_EMBEDDINGS: 'hashing',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
  REDIS_URL: 'redis://127.0.0.1:6399',
  AGENTIC_REDIS_PREFIX: 'other',
  AGENTIC_MODEL_TIER_1: 'openai:local-model',
  AGENTIC_MODEL_TIER_2: 'openai:local-model',
  AGENTIC_MODEL_TIER_3: 'openai:local-model',
  AGENTIC_MODEL_TIER_4: 'openai:local-model',
  AGENTIC_MODEL_TIER_5: 'openai:local-model',
  AGENTIC_WORKER_PORT: '9999',
  AGENTIC_BUDGET_STEP_DOWN_AT: '0.5',
};

/** Variables that are valid only together with another. */
const COMPANIONS: Record<string, Record<string, string>> = {
  AGENTIC_ROLE: { REDIS_URL: 'redis://127.0.0.1:6399' },
};

/** A value of `name` other than its default, valid for the schema. */
function otherValue(name: string, property: Property): string {
  if (SPECIAL[name] !== undefined) return SPECIAL[name];
  if (property.enum !== undefined) return property.enum.find((v) => v !== property.default)!;
  switch (property.type) {
    case 'boolean':
      return property.default === true ? '0' : '1';
    case 'integer':
    case 'number': {
      const base = typeof property.default === 'number' ? property.default : 0;
      const up = base + 1;
      return String(property.maximum !== undefined && up > property.maximum ? base - 1 : up);
    }
    case 'string':
      return 'other-value';
  }
}

/** The schema variables the LLM providers read through `llm.setting` (their descriptors say). */
const PROVIDER_SETTINGS = [
  ...new Set(
    PROVIDER_DESCRIPTORS.flatMap((d) => providerVariables(d))
      .filter((v) => !v.secret)
      .map((v) => v.name),
  ),
];

/**
 * The configuration as data: the providers' settings read as they read them, secrets left out
 * (they are not variables of the schema).
 */
function snapshot(config: Config): unknown {
  const { llm, toolChildEnv: _childEnv, ...rest } = config;
  const { secrets, setting, isSet, ...llmRest } = llm;
  const settings = PROVIDER_SETTINGS.map((name) => [name, setting(name), isSet(name)]);
  // Whether the secrets directory's credential is seen (never its value).
  const secret = secrets.get(SECRET) !== undefined;
  return JSON.parse(JSON.stringify({ ...rest, llm: { ...llmRest, settings, secret } })) as unknown;
}

describe('config schema: the one declaration of the environment variables', () => {
  let cwd: string;
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'agentic-config-schema-'));
    await writeFile(join(cwd, SECRET), 'value\n');
    SPECIAL.AGENTIC_SECRETS_DIR = cwd;
  });
  after(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('every variable the schema declares changes the loaded configuration (none is declared and ignored)', () => {
    const ignored: string[] = [];
    for (const [name, property] of Object.entries(PROPERTIES)) {
      const companions = COMPANIONS[name] ?? {};
      const env = { ...companions, [name]: otherValue(name, property) };
      const against = snapshot(loadConfig(companions, cwd));
      const changed = snapshot(loadConfig(env, cwd));
      if (JSON.stringify(changed) === JSON.stringify(against)) ignored.push(`${name}=${env[name]}`);
    }
    expect(ignored).to.deep.equal([]);
  });
});
