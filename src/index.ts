/**
 * agentic-runtime's embedding API: the only public import.
 *
 * ```ts
 * import { createRuntime } from 'agentic-runtime';
 * const runtime = createRuntime({ noLlm: true, runsDir: './runs' });
 * const record = await runtime.run({ workflow: 'test_deterministic', input: { text: 'hi' } });
 * await runtime.shutdown();
 * ```
 *
 * @packageDocumentation
 */

/** Creates a runtime (one XState system); see {@link RuntimeOptions}. */
export { createRuntime, SHUTDOWN_REASON } from './engine/runtime.js';
export type { Inspector } from './engine/inspection.js';
/** Applies the documented defaults to {@link RuntimeOptions}. */
export {
  resolveRuntimeOptions,
  DEFAULT_MAX_ACTIVE_RUNS,
  DEFAULT_MAX_CONCURRENCY,
} from './engine/runtime-options.js';
/** The runtime contract and its request, handle and result shapes. */
export {
  ADAPTERS,
  type AdapterName,
  type ResolvedRuntimeOptions,
  type RunHandle,
  type RunRecord,
  type RerunRequest,
  type RunRequest,
  type Runtime,
  type RuntimeOptions,
  type ShutdownOptions,
  type StepRecord,
  type ValidationResult,
  type WorkflowEvent,
  type WorkflowSource,
} from './engine/types.js';
export type { RuntimeApprovals } from './engine/runtime-approvals.js';
/** Run budgets (`RunRequest.budget`, `RuntimeOptions.budgets`, docs/budgets.md). */
export type { BudgetOptions } from './engine/types.js';
export {
  BUDGET_POLICIES,
  type BudgetLimits,
  type BudgetPolicy,
  type RunBudgetRequest,
  type Spend,
} from './engine/budget/budget-limits.js';
export type { CallPricer } from './engine/budget/budget-gate.js';
/**
 * Why a run is not moving: `runtime.explain(runId)` gives an active run's engine facts, which
 * `explainActiveRun` turns into reason codes and sentences (docs/explain.md).
 */
export {
  explainActiveRun,
  type ActiveRunFacts,
  type ExplainContext,
  type RunExplanationResponse,
} from './engine/run-explain.js';
export type { EngineFacts, StepFacts } from '../machines/scheduler/step-waits.js';
/** What becomes of a run whose process stopped (`RuntimeOptions.resume`, docs/durable-runs.md). */
export { RESUME_POLICIES, type ResumePolicy } from './config/resume-policy.js';
export { processTurnSlicer, type TurnSlicer } from './engine/turn-slicer.js';
/**
 * What an engine actor (the run actor's `engine` child) emits and finishes with, and the clock
 * `createRuntime({ clock })` takes.
 */
export type {
  EngineClock,
  EngineEvent,
  EngineOutput,
  StepOutcome,
} from '../machines/engine-contract.js';
/** The run actor (`RunHandle.actor`), its events and result, and the abort reasons it records. */
export {
  CANCELLED,
  RUN_TIMED_OUT,
  type RunActor,
  type RunEmitted,
  type RunEvent,
  type RunResult,
} from '../machines/run.logic.js';
/** Agents embedders may register through `createRuntime({ agents })`. */
export type { Agent, AgentRequest, AgentResult } from './agents/types.js';
/**
 * The LLM client contract of tier 1–5 agents (hand your own to `createRuntime({ llm })`), the
 * no-LLM placeholder client, and the parts the service builds its client from: the tier
 * router (fallback chains, circuit breaker, Retry-After, in-flight cap), the providers over
 * undici, the probe, and the provider contract for one's own protocol. A provider of one's own
 * is one {@link ProviderDescriptor} added to `PROVIDER_DESCRIPTORS` in
 * `createLlmService(settings, { descriptors })`.
 */
export {
  addUsage,
  createAnthropicProvider,
  createGeminiProvider,
  createHttpClient,
  createLlmRouter,
  createLlmService,
  createNoLlmClient,
  createOpenAiCompatibleProvider,
  createProviderSet,
  LLM_ERROR_KINDS,
  LLM_TIERS,
  LlmError,
  loadTierChains,
  parseModelId,
  probeProviders,
  PROVIDER_DESCRIPTORS,
  PROVIDER_NAMES,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type HttpClient,
  type HttpTimeouts,
  type LlmAttemptOutcome,
  type LlmClient,
  type LlmErrorKind,
  type LlmRequest,
  type LlmResponse,
  type LlmRouter,
  type LlmService,
  type LlmServiceOptions,
  type ModelRef,
  type ProbeResult,
  type Provider,
  type ProviderContext,
  type ProviderDescriptor,
  type ProviderSet,
  type ProviderVariable,
  type RouterOptions,
  type TierChains,
  type TokenUsage,
  type ToolCall,
  // A tool as the model sees it (name, description, JSON Schema); the runtime's own tools are
  // the ToolDefinition of src/tools.
  type ToolDefinition as LlmToolDefinition,
} from './llm/index.js';
/** Provider credentials: the secret-provider contract and its environment and file backends. */
export {
  chainSecretProviders,
  createEnvSecretProvider,
  createFileSecretProvider,
  createSecretProvider,
  type LlmSettings,
  type SecretProvider,
} from './config/index.js';
/** Workflow documents and their compiled form. */
export { compileWorkflow } from './workflow/index.js';
export type {
  CompiledStep,
  CompiledWorkflow,
  EvalScope,
  InputSpec,
  OutputSpec,
  StepDocument,
  StepStatus,
  WorkflowDocument,
} from './workflow/types.js';
/** Byte bounds on content (docs/limits.md): YAML, templates, step input and output, run records. */
export { DEFAULT_CONTENT_LIMITS, MAX_YAML_DEPTH, type ContentLimits } from './workflow/limits.js';
export { EvaluationLimitError, TemplateSizeError } from './workflow/expressions.js';
export {
  TRUNCATED_FLAG,
  isTruncationMarker,
  type TruncationMarker,
} from './workflow/size-bounds.js';
/** Run files: naming and recovery of runs interrupted by a crash. */
export { runFileName, INTERRUPTED } from './store/run-files.js';
export { recoverInterruptedRuns } from './store/startup-recovery.js';
export type { RecoveryReport } from './store/startup-recovery.js';
/** Run-file writes: the write queue's status, unwritten records, the writer seam, temp-file clean-up. */
export type { RunWriterStatus, UnwrittenRecord } from './store/run-writer.js';
export type { FileWriter } from './store/write-thread.js';
export { removeStaleTempFiles } from './store/stale-temp-files.js';
/**
 * Errors: one AppError with a stable code, the subclasses callers branch on, and the catalogue of
 * codes with their statuses and meanings (docs/errors.md).
 */
export {
  AdapterUnavailableError,
  AppError,
  AuthError,
  ConfigError,
  ConflictError,
  DependencyError,
  ERROR_CATALOGUE,
  ERROR_CODES,
  NotFoundError,
  RateLimitedError,
  RunNotResumableError,
  TooManyActiveRunsError,
  RunsBudgetSpentError,
  ValidationError,
  isAppError,
  type ErrorCode,
  type ErrorCodeInfo,
  type ErrorDetail,
} from './errors.js';
/** Service configuration from an environment record (the same options, from env). */
export {
  loadConfig,
  type Config,
  type TraceSamplerName,
  type TraceSamplerSetting,
  type TraceSamplerSource,
} from './config/index.js';
/**
 * The memory store (spec, memory store contract): asynchronous get/set/delete/search/clear;
 * in-process by default, a file when `tools.memoryPath` (AGENTIC_MEMORY_PATH) is set, a
 * hybrid-search vector store (`tools.memoryStore`; embeddings from a provider with
 * `createProviderEmbedder`, AGENTIC_MEMORY_EMBEDDINGS), and namespaced views (one per workflow,
 * plus `shared`).
 */
export {
  createHashingEmbedder,
  createProviderEmbedder,
  embedderFor,
  HASHING_EMBEDDINGS,
  type EmbeddingProviders,
  type ProviderEmbedderOptions,
  createInProcessMemoryStore,
  createVectorMemoryStore,
  DEFAULT_SEARCH_LIMIT,
  HASHING_DIMENSIONS,
  MemoryStoreError,
  namespacedMemory,
  openFileMemoryStore,
  RRF_K,
  SHARED_NAMESPACE,
  type Embedder,
  type FileMemoryStore,
  type MemoryHit,
  type MemoryStore,
  type NamespaceableMemoryStore,
  type VectorMemoryStoreOptions,
} from './memory/index.js';
/**
 * Built-in tools (docs/tools.md): options of `createRuntime({ tools })`, the tool error,
 * approval providers (deny by default), and the registry for calling tools outside a run.
 */
export {
  APPROVAL_PROVIDERS,
  autoApproveProvider,
  autoDenyProvider,
  BUILT_IN_TOOLS,
  builtInApprovalProvider,
  createHttpApprovalProvider,
  createPolicyApprovalProvider,
  createToolKit,
  observeApprovals,
  isPrivateAddress,
  TOOL_RISKS,
  ToolError,
  toolsOptionsFromConfig,
  type AddressLookup,
  type ApprovalDecision,
  type ApprovalProvider,
  type ApprovalProviderName,
  type ApprovalAnswer,
  type ApprovalObserver,
  type ApprovalQueue,
  type ApprovalRequest,
  type HttpApprovalOptions,
  type PendingApproval,
  type ToolCallContext,
  type ToolCaller,
  type ToolDefinition,
  type ToolKit,
  type ToolRegistry,
  type ToolRisk,
  type ToolsOptions,
} from './tools/index.js';
/**
 * Prometheus metrics (docs/metrics.md): `createServiceMetrics({ registry })` registers the
 * runtime's metrics in the app's own prom-client Registry (or a new one, read from
 * `metrics.registry`), `observeRuntime(runtime, metrics)` feeds the run, step and approval
 * metrics, `createToolCallObserver(metrics)` (as `tools.onToolCall`) the tool-call metric.
 */
export {
  CountingCounter,
  CountingHistogram,
  createServiceMetrics,
  createToolCallObserver,
  METRIC_PREFIX,
  MAX_NAME_LABELS,
  observeRuntime,
  OTHER_LABEL,
  type GaugeSources,
  type MetricsOptions,
  type ServiceMetrics,
} from './metrics/index.js';
/**
 * OpenTelemetry traces (docs/tracing.md): hand the app's own TracerProvider to
 * `createRuntime({ tracerProvider })` (runs, step attempts, model and tool calls) and a
 * request's context to `run({ traceContext })`; `createOtlpTracerProvider` builds the provider
 * the service uses (OTLP over gRPC or HTTP/protobuf, batched, `service.name` and
 * `service.version`). Nothing is registered globally.
 */
export {
  ATTR as TRACE_ATTRIBUTES,
  createOtlpTracerProvider,
  DEFAULT_OTLP_ENDPOINTS,
  MAX_SENSITIVE_CHARS,
  otlpTracesUrl,
  TRACE_SERVICE_NAME,
  type OtlpProtocol,
  type OtlpTracingOptions,
} from './tracing/index.js';
