import type { ValidateFunction } from 'ajv';
import { isAbsolute, join, resolve } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import schema from '../../schemas/config.schema.json' with { type: 'json' };
import { ConfigError } from '../errors.js';
import { validate as validateConfigSchema } from '../generated/validators/config.js';
import { resolveWorkflowsLocation, type WorkflowsSource } from './workflows-location.js';
import { parseRateLimit, type RateLimitSpec } from './rate-limit-spec.js';
import { readTierOverrides, type LlmSettings } from './llm-settings.js';
import { createSecretProvider } from './secrets.js';
import { childProcessEnv } from './child-env.js';
import type { AdapterName } from './adapter-names.js';
import type { WriteSyncMode } from './write-sync-modes.js';
import type { ResumePolicy } from './resume-policy.js';
import { packageRoot, shippedPricesFile } from './package-info.js';
import {
  resolveTraceSampler,
  type TraceSamplerName,
  type TraceSamplerSetting,
} from './trace-sampler.js';

/** Resolved service configuration: every default applied, paths absolute, frozen. */
export interface Config {
  host: string;
  port: number;
  apiKey: string | undefined;
  corsOrigins: readonly string[];
  defaultAdapter: AdapterName;
  noLlm: boolean;
  fileBaseDir: string | undefined;
  shellAllowedCommands: readonly string[];
  sanitizerFailOpen: boolean;
  blockPrivateIps: boolean;
  rateLimit: RateLimitSpec;
  authLockout: { windowSeconds: number; threshold: number; durationSeconds: number };
  trustProxy: boolean;
  /** With {@link Config.trustProxy}: X-Forwarded-For entries appended by trusted proxies. */
  trustedProxyHops: number;
  externalAgentsDir: string | undefined;
  /** Absolute path of the custom agents module (`AGENTIC_AGENTS_MODULE`), or undefined. */
  agentsModule: string | undefined;
  memoryPath: string | undefined;
  /** AGENTIC_MEMORY_EMBEDDINGS: `hashing` or `provider:model`; undefined: substring search. */
  memoryEmbeddings: string | undefined;
  /** AGENTIC_APPROVAL_PROVIDER: who approves high-risk tool calls. */
  approvalProvider: 'deny' | 'auto' | 'policy' | 'http';
  /** AGENTIC_APPROVAL_TIMEOUT_SECONDS, in ms. */
  approvalTimeoutMs: number;
  /** AGENTIC_APPROVAL_EVENT_ARGUMENTS. */
  approvalEventArguments: boolean;
  /** AGENTIC_APPROVAL_ALLOWED_TOOLS: what the `policy` provider approves. */
  approvalAllowedTools: readonly string[];
  /** AGENTIC_TOOL_MAX_BYTES. */
  toolMaxBytes: number;
  /** AGENTIC_MCP_CONFIG: the MCP servers file; undefined: no MCP servers. */
  mcpConfigFile: string | undefined;
  /** AGENTIC_PRICES_FILE: the price table (src/llm/prices.ts). @default the shipped agents/prices.yaml */
  pricesFile: string;
  /** AGENTIC_TOOL_TIMEOUT_SECONDS, in ms. */
  toolTimeoutMs: number;
  /** AGENTIC_HTTP_MAX_REDIRECTS. */
  httpMaxRedirects: number;
  /** AGENTIC_AGENT_MAX_ROUNDS. */
  agentMaxRounds: number;
  /** AGENTIC_AGENT_MAX_CALLS_PER_ROUND. */
  agentMaxCallsPerRound: number;
  /** AGENTIC_TOOL_RESULT_MAX_CHARS. */
  toolResultMaxChars: number;
  /** The whole environment of tool child processes: PATH, HOME, locale; never a key. */
  toolChildEnv: Readonly<Record<string, string>>;
  /** Tier → its chain from `AGENTIC_MODEL_TIER_<N>`, comma-joined (see {@link Config.llm}). */
  modelTierOverrides: Readonly<Record<string, string>>;
  /** Providers, tiers, breaker and timeouts of the LLM layer. */
  llm: LlmSettings;
  judgeModel: string | undefined;
  tracing: boolean;
  traceSensitive: boolean;
  /**
   * The traces recorded: AGENTIC_TRACE_SAMPLE_RATIO when set, else OTEL_TRACES_SAMPLER and
   * OTEL_TRACES_SAMPLER_ARG, else `parentbased_always_on`.
   */
  traceSampler: TraceSamplerSetting;
  /** GET /metrics is served (AGENTIC_METRICS). */
  metrics: boolean;
  /** /metrics needs no API key (AGENTIC_METRICS_PUBLIC). */
  metricsPublic: boolean;
  runsDir: string;
  /** Readiness needs this much free space in the runs directory's file system (bytes; 0: off). */
  runsMinFreeBytes: number;
  /** Days run files are kept (0: forever). */
  runsRetentionDays: number;
  /** Run files kept (0: no limit). */
  runsMax: number;
  /** Bytes of full run records the history caches. */
  runCacheBytes: number;
  writeConcurrency: number;
  /** How run records are made durable (AGENTIC_WRITE_SYNC). */
  writeSync: WriteSyncMode;
  writeQueueMax: number;
  writeRetryMaxMs: number;
  /** AGENTIC_OWNER_LEASE_SECONDS, in ms. */
  ownerLeaseMs: number;
  workflowsDir: string;
  /** Where {@link Config.workflowsDir} came from: configured, `./workflows`, or the package's. */
  workflowsSource: WorkflowsSource;
  /** Why saving workflows is refused (the package's shipped directory), else undefined. */
  workflowsReadOnlyReason: string | undefined;
  maxConcurrency: number;
  /** Runs active at once; more are refused with 429 (`AGENTIC_MAX_ACTIVE_RUNS`). */
  maxActiveRuns: number;
  /** Timeout of a step attempt without `timeout_seconds`, in ms (`AGENTIC_STEP_TIMEOUT_SECONDS`). */
  stepTimeoutMs: number;
  /** Share of a run's budget spent from which LLM steps run a tier lower (`AGENTIC_BUDGET_STEP_DOWN_AT`). */
  budgetStepDownAt: number;
  /** Output tokens a budgeted run's model call may produce (`AGENTIC_BUDGET_CALL_MAX_TOKENS`). */
  budgetCallMaxTokens: number;
  maxBodyBytes: number;
  /** Byte bounds on YAML, templates, step I/O and run records (docs/limits.md). */
  limits: Readonly<{
    maxYamlBytes: number;
    maxExpandedYamlBytes: number;
    maxTemplateBytes: number;
    maxStepIoBytes: number;
    maxRunRecordBytes: number;
    /** AGENTIC_MAX_RUN_BYTES (0, the default: the run-record bound). */
    maxRunBytes: number;
  }>;
  /**
   * AGENTIC_MAX_RUNS_HELD_BYTES: bytes of step inputs and outputs all active runs may hold;
   * undefined (0, the default): a sixteenth of the heap limit.
   */
  maxRunsHeldBytes: number | undefined;
  localDatasetsDir: string;
  /** Largest dataset file read (`AGENTIC_MAX_DATASET_BYTES`). */
  maxDatasetBytes: number;
  /** Bytes of dataset indexes and parsed JSON datasets kept (`AGENTIC_DATASET_CACHE_BYTES`). */
  datasetCacheBytes: number;
  frontendDir: string;
  /** The built-in console's build (`dist/console`), or undefined when `AGENTIC_CONSOLE=0`. */
  consoleDir: string | undefined;
  shutdownGraceSeconds: number;
  /** What becomes of a run whose process stopped (`AGENTIC_RESUME`, docs/durable-runs.md). */
  resume: ResumePolicy;
  finishedBuffers: number;
  /** Serialized bytes all finished runs' replay buffers may hold. */
  finishedBuffersMaxBytes: number;
  /** Interval between WebSocket pings, in ms. */
  wsPingIntervalMs: number;
  /** WebSockets per client IP waiting for a run that has not started. */
  wsMaxPendingPerIp: number;
  otlpEndpoint: string | undefined;
  otlpProtocol: 'grpc' | 'http/protobuf';
  logFormat: 'json' | 'text';
  logLevel: string;
  redisUrl: string | undefined;
  /** AGENTIC_ROLE: api and worker need {@link Config.redisUrl}. */
  role: 'all' | 'api' | 'worker';
  /** AGENTIC_WORKER_CONCURRENCY: runs a worker executes at once. */
  workerConcurrency: number;
  /**
   * AGENTIC_WORKER_PORT: the port of a worker's endpoint (metrics, health), or undefined when
   * the worker listens on no port. Unset, it is {@link DEFAULT_WORKER_PORT} with metrics on.
   */
  workerPort: number | undefined;
  /** AGENTIC_WORKER_LOCK_SECONDS, in ms: a worker silent this long is taken for dead. */
  workerLockMs: number;
  /** AGENTIC_EVENT_STREAM_TTL_SECONDS, in ms: a run's Redis event stream lives this long after it ends. */
  eventStreamTtlMs: number;
  /** AGENTIC_REDIS_PREFIX: prefix of every Redis key and BullMQ queue. */
  redisPrefix: string;
}

type Env = Record<string, string | undefined>;

/**
 * A worker's endpoint port when AGENTIC_METRICS=1 and AGENTIC_WORKER_PORT is unset: the port
 * Prometheus exporters conventionally use (OpenTelemetry's Prometheus exporter), distinct from
 * AGENTIC_PORT so an api instance and a worker on one host do not collide.
 */
export const DEFAULT_WORKER_PORT = 9464;

const DEFAULT_CORS_ORIGINS = [5173, 8000, 8010].flatMap((port) => [
  `http://localhost:${port}`,
  `http://127.0.0.1:${port}`,
]);

// Precompiled by `npm run gen` (scripts/validators.ts) with coercion and defaults.
const validateEnv = validateConfigSchema as ValidateFunction<
  Record<string, string | number | boolean>
>;
const PROPERTIES = schema.properties as Record<string, { type: string; description?: string }>;

/**
 * Reads configuration from an environment record (pass `process.env` at the edge). Pure apart
 * from one look at the disk: without `AGENTIC_WORKFLOWS_DIR`, whether `<cwd>/workflows` exists
 * decides the workflows directory (see `resolveWorkflowsLocation`).
 * Throws one {@link ConfigError} naming every bad variable.
 */
export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const raw: Record<string, string | number | boolean> = {};
  const problems: string[] = [];
  for (const [name, prop] of Object.entries(PROPERTIES)) {
    const value = env[name];
    if (value === undefined || value.trim() === '') continue;
    if (prop.type === 'boolean') {
      const flag = parseFlag(value);
      if (flag === undefined) {
        problems.push(
          `${name}=${JSON.stringify(value)}: expected one of ${FLAG_WORDS}. ${prop.description ?? ''}`.trim(),
        );
      } else raw[name] = flag;
    } else {
      raw[name] = value.trim();
    }
  }
  if (!validateEnv(raw)) {
    for (const error of validateEnv.errors ?? []) {
      const name = error.instancePath.replace(/^\//, '');
      const hint = PROPERTIES[name]?.description ?? '';
      // ajv says "must be equal to one of the allowed values" without naming them.
      const allowed = error.keyword === 'enum' ? allowedValues(error.params) : '';
      problems.push(
        `${name}=${JSON.stringify(env[name])}: ${error.message ?? 'invalid'}${allowed}. ${hint}`.trim(),
      );
    }
  }
  const tierChains = readTierOverrides(env, problems);
  if (raw.AGENTIC_ROLE !== 'all' && raw.REDIS_URL === undefined && problems.length === 0) {
    problems.push(
      `AGENTIC_ROLE=${String(raw.AGENTIC_ROLE)} needs REDIS_URL: api instances and workers meet only through Redis.`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const str = (name: string): string | undefined =>
    raw[name] === undefined ? undefined : String(raw[name]);
  const num = (name: string): number => Number(raw[name]);
  const bool = (name: string): boolean => raw[name] === true;
  const path = (name: string): string | undefined => {
    const value = str(name);
    return value === undefined ? undefined : isAbsolute(value) ? value : resolve(cwd, value);
  };
  const list = (name: string): string[] =>
    (str(name) ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  const tiers: Record<string, string> = {};
  for (const [tier, chain] of Object.entries(tierChains)) tiers[tier] = chain.join(',');
  const workflows = resolveWorkflowsLocation(str('AGENTIC_WORKFLOWS_DIR'), cwd);
  const pricesFile = path('AGENTIC_PRICES_FILE') ?? shippedPricesFile();
  const rateLimit = parseRateLimit(String(raw.AGENTIC_RATE_LIMIT_DEFAULT));
  if (!rateLimit) throw new ConfigError(['AGENTIC_RATE_LIMIT_DEFAULT: expected N/unit']);
  const embeddingsSetting = str('AGENTIC_MEMORY_EMBEDDINGS');
  const memoryEmbeddings = embeddingsSetting === '' ? undefined : embeddingsSetting;
  if (memoryEmbeddings !== undefined && str('AGENTIC_MEMORY_PATH') !== undefined) {
    throw new ConfigError([
      'AGENTIC_MEMORY_EMBEDDINGS: the vector store is in-process; unset it or AGENTIC_MEMORY_PATH',
    ]);
  }

  return Object.freeze({
    host: String(raw.AGENTIC_HOST),
    port: num('AGENTIC_PORT'),
    apiKey: str('AGENTIC_API_KEY'),
    corsOrigins: Object.freeze(
      raw.AGENTIC_CORS_ORIGINS === undefined ? DEFAULT_CORS_ORIGINS : list('AGENTIC_CORS_ORIGINS'),
    ),
    // The schema's enum has already rejected any other name.
    defaultAdapter: raw.AGENTIC_DEFAULT_ADAPTER as AdapterName,
    noLlm: bool('AGENTIC_NO_LLM'),
    fileBaseDir: path('AGENTIC_FILE_BASE_DIR'),
    shellAllowedCommands: Object.freeze(list('AGENTIC_SHELL_ALLOWED_COMMANDS')),
    sanitizerFailOpen: bool('AGENTIC_SANITIZER_FAIL_OPEN'),
    blockPrivateIps: bool('AGENTIC_BLOCK_PRIVATE_IPS'),
    rateLimit,
    authLockout: {
      windowSeconds: num('AGENTIC_AUTH_LOCKOUT_WINDOW_SECONDS'),
      threshold: num('AGENTIC_AUTH_LOCKOUT_THRESHOLD'),
      durationSeconds: num('AGENTIC_AUTH_LOCKOUT_DURATION_SECONDS'),
    },
    trustProxy: bool('AGENTIC_TRUST_PROXY'),
    trustedProxyHops: num('AGENTIC_TRUSTED_PROXY_HOPS'),
    externalAgentsDir: path('AGENTIC_EXTERNAL_AGENTS_DIR'),
    agentsModule: path('AGENTIC_AGENTS_MODULE'),
    memoryPath: path('AGENTIC_MEMORY_PATH'),
    memoryEmbeddings,
    approvalProvider: String(raw.AGENTIC_APPROVAL_PROVIDER) as Config['approvalProvider'],
    approvalAllowedTools: Object.freeze(list('AGENTIC_APPROVAL_ALLOWED_TOOLS')),
    approvalTimeoutMs: Math.round(num('AGENTIC_APPROVAL_TIMEOUT_SECONDS') * 1000),
    approvalEventArguments: bool('AGENTIC_APPROVAL_EVENT_ARGUMENTS'),
    toolMaxBytes: num('AGENTIC_TOOL_MAX_BYTES'),
    mcpConfigFile: path('AGENTIC_MCP_CONFIG'),
    pricesFile,
    toolTimeoutMs: Math.round(num('AGENTIC_TOOL_TIMEOUT_SECONDS') * 1000),
    httpMaxRedirects: num('AGENTIC_HTTP_MAX_REDIRECTS'),
    agentMaxRounds: num('AGENTIC_AGENT_MAX_ROUNDS'),
    agentMaxCallsPerRound: num('AGENTIC_AGENT_MAX_CALLS_PER_ROUND'),
    toolResultMaxChars: num('AGENTIC_TOOL_RESULT_MAX_CHARS'),
    toolChildEnv: Object.freeze(childProcessEnv(env)),
    modelTierOverrides: Object.freeze(tiers),
    llm: Object.freeze({
      secrets: createSecretProvider(env, path('AGENTIC_SECRETS_DIR')),
      setting: (name: string) => str(schemaVariable(name)),
      isSet: (name: string) => (env[schemaVariable(name)]?.trim() ?? '') !== '',
      tierOverrides: Object.freeze(tierChains),
      modelsFile: path('AGENTIC_MODELS_FILE'),
      pricesFile,
      breakerThreshold: num('AGENTIC_LLM_BREAKER_THRESHOLD'),
      breakerCooldownMs: num('AGENTIC_LLM_BREAKER_COOLDOWN_SECONDS') * 1000,
      retryAfterMaxMs: num('AGENTIC_LLM_RETRY_AFTER_MAX_SECONDS') * 1000,
      maxInFlight: num('AGENTIC_LLM_MAX_IN_FLIGHT'),
      connectTimeoutMs: num('AGENTIC_LLM_CONNECT_TIMEOUT_MS'),
      headersTimeoutMs: num('AGENTIC_LLM_HEADERS_TIMEOUT_MS'),
      bodyTimeoutMs: num('AGENTIC_LLM_BODY_TIMEOUT_MS'),
      probeTimeoutMs: num('AGENTIC_LLM_PROBE_TIMEOUT_MS'),
      maxAnswerBytes: num('AGENTIC_LLM_MAX_ANSWER_BYTES') || defaultMaxAnswerBytes(),
      idleTimeoutMs: num('AGENTIC_LLM_IDLE_TIMEOUT_MS'),
      callTimeoutMs: num('AGENTIC_LLM_CALL_TIMEOUT_MS'),
    }),
    judgeModel: str('AGENTIC_JUDGE_MODEL'),
    tracing: bool('AGENTIC_TRACING'),
    traceSensitive: bool('AGENTIC_TRACE_SENSITIVE'),
    traceSampler: Object.freeze(
      resolveTraceSampler(
        {
          ratio: num('AGENTIC_TRACE_SAMPLE_RATIO'),
          sampler: raw.OTEL_TRACES_SAMPLER as TraceSamplerName,
          samplerArg: num('OTEL_TRACES_SAMPLER_ARG'),
        },
        (name) => env[name] !== undefined && env[name].trim() !== '',
      ),
    ),
    metrics: bool('AGENTIC_METRICS'),
    metricsPublic: bool('AGENTIC_METRICS_PUBLIC'),
    runsDir: path('AGENTIC_RUNS_DIR') ?? resolve(cwd, 'runs'),
    runsMinFreeBytes: num('AGENTIC_RUNS_MIN_FREE_MB') * 1024 * 1024,
    runsRetentionDays: num('AGENTIC_RUNS_RETENTION_DAYS'),
    runsMax: num('AGENTIC_RUNS_MAX'),
    runCacheBytes: Math.floor(num('AGENTIC_RUN_CACHE_MB') * 1024 * 1024),
    writeConcurrency: num('AGENTIC_WRITE_CONCURRENCY'),
    writeSync: raw.AGENTIC_WRITE_SYNC as WriteSyncMode,
    writeQueueMax: num('AGENTIC_WRITE_QUEUE_MAX'),
    writeRetryMaxMs: num('AGENTIC_WRITE_RETRY_MAX_MS'),
    ownerLeaseMs: Math.round(num('AGENTIC_OWNER_LEASE_SECONDS') * 1000),
    workflowsDir: workflows.dir,
    workflowsSource: workflows.source,
    workflowsReadOnlyReason: workflows.readOnlyReason,
    maxConcurrency: num('AGENTIC_MAX_CONCURRENCY'),
    maxActiveRuns: num('AGENTIC_MAX_ACTIVE_RUNS'),
    stepTimeoutMs: Math.round(num('AGENTIC_STEP_TIMEOUT_SECONDS') * 1000),
    budgetStepDownAt: num('AGENTIC_BUDGET_STEP_DOWN_AT'),
    budgetCallMaxTokens: num('AGENTIC_BUDGET_CALL_MAX_TOKENS'),
    maxBodyBytes: num('AGENTIC_MAX_BODY_BYTES'),
    limits: Object.freeze({
      maxYamlBytes: num('AGENTIC_MAX_YAML_BYTES'),
      maxExpandedYamlBytes: num('AGENTIC_MAX_EXPANDED_YAML_BYTES'),
      maxTemplateBytes: num('AGENTIC_MAX_TEMPLATE_BYTES'),
      maxStepIoBytes: num('AGENTIC_MAX_STEP_IO_BYTES'),
      maxRunRecordBytes: num('AGENTIC_MAX_RUN_RECORD_BYTES'),
      maxRunBytes: num('AGENTIC_MAX_RUN_BYTES') || num('AGENTIC_MAX_RUN_RECORD_BYTES'),
    }),
    maxRunsHeldBytes: num('AGENTIC_MAX_RUNS_HELD_BYTES') || undefined,
    localDatasetsDir: path('AGENTIC_LOCAL_DATASETS_DIR') ?? resolve(cwd, 'datasets'),
    maxDatasetBytes: num('AGENTIC_MAX_DATASET_BYTES'),
    datasetCacheBytes: num('AGENTIC_DATASET_CACHE_BYTES'),
    frontendDir: path('AGENTIC_FRONTEND_DIR') ?? resolve(cwd, 'frontend/dist'),
    consoleDir: bool('AGENTIC_CONSOLE') ? join(packageRoot, 'dist', 'console') : undefined,
    shutdownGraceSeconds: num('AGENTIC_SHUTDOWN_GRACE_SECONDS'),
    resume: raw.AGENTIC_RESUME as ResumePolicy,
    finishedBuffers: num('AGENTIC_FINISHED_BUFFERS'),
    finishedBuffersMaxBytes: num('AGENTIC_FINISHED_BUFFERS_MAX_BYTES'),
    wsPingIntervalMs: Math.round(num('AGENTIC_WS_PING_INTERVAL_SECONDS') * 1000),
    wsMaxPendingPerIp: num('AGENTIC_WS_MAX_PENDING_PER_IP'),
    otlpEndpoint: str('OTEL_EXPORTER_OTLP_ENDPOINT'),
    otlpProtocol: raw.OTEL_EXPORTER_OTLP_PROTOCOL as Config['otlpProtocol'],
    logFormat: raw.LOG_FORMAT as Config['logFormat'],
    logLevel: String(raw.LOG_LEVEL),
    redisUrl: str('REDIS_URL'),
    role: raw.AGENTIC_ROLE as Config['role'],
    workerConcurrency: num('AGENTIC_WORKER_CONCURRENCY'),
    // A worker with metrics must be scrapable; without, it listens only when asked to.
    workerPort:
      raw.AGENTIC_WORKER_PORT !== undefined
        ? num('AGENTIC_WORKER_PORT')
        : bool('AGENTIC_METRICS')
          ? DEFAULT_WORKER_PORT
          : undefined,
    workerLockMs: num('AGENTIC_WORKER_LOCK_SECONDS') * 1000,
    eventStreamTtlMs: num('AGENTIC_EVENT_STREAM_TTL_SECONDS') * 1000,
    redisPrefix: String(raw.AGENTIC_REDIS_PREFIX),
  });
}

/** `name` when the config schema declares it; throws otherwise (credentials go through secrets). */
function schemaVariable(name: string): string {
  if (!Object.hasOwn(PROPERTIES, name)) {
    throw new Error(`${name} is not a variable of schemas/config.schema.json`);
  }
  return name;
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];
const FLAG_WORDS = [...TRUE_WORDS, ...FALSE_WORDS].join(', ');

/** Booleans accept what docs/configuration.md says (any case): 1/0, true/false, yes/no, on/off. */
function parseFlag(value: string): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (TRUE_WORDS.includes(v)) return true;
  if (FALSE_WORDS.includes(v)) return false;
  return undefined;
}

function allowedValues(params: Record<string, unknown>): string {
  const values = params.allowedValues;
  return Array.isArray(values) ? ` (${values.map(String).join(', ')})` : '';
}

/**
 * The default bound of one model answer: 32 MiB, or a 64th of the heap limit when that is less.
 * A bound per call is not one per process: 8 calls streaming one endless SSE event killed a
 * process with a 256 MB heap at 32 MiB each (each held byte has copies in the reader, the event
 * and the parser), and lived at a 64th (about 4 MiB).
 */
function defaultMaxAnswerBytes(): number {
  return Math.min(32 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 64));
}
