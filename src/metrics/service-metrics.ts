/**
 * The service's Prometheus metrics (issue 14): one set per service or runtime instance,
 * registered in a registry of its own (or the embedder's), never prom-client's global one.
 * Every label is bounded: route templates instead of paths, closed sets for statuses, reasons
 * and categories, and {@link createBoundedLabel} for names that come from workflow files.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { createBoundedLabel } from './bounded-label.js';
import { CountingCounter } from './counting-counter.js';
import { CountingHistogram } from './counting-histogram.js';

/** Prefix of every metric name (the process defaults included). */
export const METRIC_PREFIX = 'agentic_';

/** Distinct workflow, agent or adapter names kept per label before `_other`. */
export const MAX_NAME_LABELS = 200;

/** Seconds; from a fast health check to a long multi-step run. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LLM_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

/** Why a request was refused before its route ran. */
export const REFUSAL_REASONS = {
  RATE_LIMIT: 'rate_limit',
  LOCKOUT: 'lockout',
  AUTH: 'auth',
} as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[keyof typeof REFUSAL_REASONS];

/** Which streaming transport a client used. */
export const STREAM_TRANSPORTS = { WS: 'ws', SSE: 'sse' } as const;
export type StreamTransport = (typeof STREAM_TRANSPORTS)[keyof typeof STREAM_TRANSPORTS];

export interface MetricsOptions {
  /**
   * The registry to register in (an embedder's own, to expose beside its metrics).
   * @default a new Registry
   */
  registry?: Registry;
  /** Collect the process defaults (event-loop lag, heap, GC, CPU, handles). @default true */
  processDefaults?: boolean;
}

/** Live values the gauges read at scrape time. */
export interface GaugeSources {
  /** Runs active in the runtime. */
  activeRuns?: () => number;
  /** Connected WebSocket clients (SSE clients are counted by the stream route itself). */
  wsClients?: () => number;
  /** The LLM router's circuits (models tried so far) and their states. */
  breakers?: () => readonly { model: string; state: string }[];
}

/** The metric objects; the runtime observer and the HTTP middleware write to them. */
export interface ServiceMetrics {
  readonly registry: Registry;
  /**
   * Observed once per request, run or step: plain counting, read at scrape time (see
   * CountingHistogram and CountingCounter).
   */
  readonly httpDuration: CountingHistogram<'method' | 'route' | 'status'>;
  readonly runsStarted: CountingCounter<'workflow' | 'adapter'>;
  readonly runsFinished: CountingCounter<'workflow' | 'adapter' | 'status'>;
  readonly runDuration: CountingHistogram<'workflow' | 'adapter' | 'status'>;
  readonly stepDuration: CountingHistogram<'agent' | 'status'>;
  readonly activeRuns: Gauge;
  readonly retries: Counter<'agent'>;
  /** Runs resumed after their process stopped (a `workflow_start` with `resumed`). */
  readonly runsResumed: Counter<'workflow' | 'adapter'>;
  /** Interrupted steps attempted again by a resumed run (a `step_start` with `attempt` > 1). */
  readonly stepsReexecuted: Counter<'agent'>;
  readonly streamClients: Gauge<'transport'>;
  readonly droppedClients: Counter<'transport'>;
  readonly replayEvictions: Counter;
  readonly sanitizerFindings: Counter<'category' | 'classification'>;
  readonly refusals: Counter<'reason'>;
  readonly llmCalls: Counter<'provider' | 'model' | 'outcome'>;
  readonly llmTokens: Counter<'provider' | 'model' | 'direction'>;
  /** USD of LLM calls at the price table (docs/llm.md, "Cost"). */
  readonly llmCost: Counter<'provider' | 'model'>;
  /** LLM calls that spent tokens on a model without a price: their cost is not in llmCost. */
  readonly llmUnpricedCalls: Counter<'provider' | 'model'>;
  readonly llmDuration: Histogram<'provider' | 'model' | 'outcome'>;
  readonly llmBreaker: Gauge<'model' | 'state'>;
  readonly evaluations: Counter<'rubric' | 'grade' | 'outcome'>;
  readonly toolCalls: Counter<'tool' | 'outcome'>;
  readonly approvals: Counter<'decision' | 'provider'>;
  /** Bounds an approval provider label (embedders bring their own providers). */
  readonly approvalProviderLabel: (name: string | undefined) => string;
  /** Bounds a workflow name label. */
  readonly workflowLabel: (name: string | undefined) => string;
  /** Bounds an agent name label. */
  readonly agentLabel: (name: string | undefined) => string;
  /** Bounds an LLM `provider:model` label (steps may pin any model). */
  readonly modelLabel: (name: string | undefined) => string;
  /** Bounds a rubric id label. */
  readonly rubricLabel: (name: string | undefined) => string;
  /** Bounds an evaluation grade label (rubrics name their own grades). */
  readonly gradeLabel: (name: string | undefined) => string;
  /** Bounds an LLM provider label (custom providers bring their own names). */
  readonly providerLabel: (name: string | undefined) => string;
  /** Bounds an adapter name label. */
  readonly adapterLabel: (name: string | undefined) => string;
  /** Sets where the gauges read their live values (the runtime, the event hub). */
  readGauges(sources: GaugeSources): void;
}

/** Creates the service's metrics in `options.registry` (or a new one). */
export function createServiceMetrics(options: MetricsOptions = {}): ServiceMetrics {
  const registry = options.registry ?? new Registry();
  if (options.processDefaults !== false) {
    collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  }
  const registers = [registry];
  const sources: GaugeSources = {};
  const modelLabel = createBoundedLabel(MAX_NAME_LABELS);
  return {
    registry,
    httpDuration: new CountingHistogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'HTTP request duration by route template (unmatched paths: "unmatched"), method and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    }),
    runsStarted: new CountingCounter({
      name: `${METRIC_PREFIX}runs_started_total`,
      help: 'Runs started, by workflow and adapter.',
      labelNames: ['workflow', 'adapter'],
      registers,
    }),
    runsFinished: new CountingCounter({
      name: `${METRIC_PREFIX}runs_finished_total`,
      help: 'Runs finished, by workflow, adapter and final status.',
      labelNames: ['workflow', 'adapter', 'status'],
      registers,
    }),
    runDuration: new CountingHistogram({
      name: `${METRIC_PREFIX}run_duration_seconds`,
      help: 'Run duration, by workflow, adapter and final status.',
      labelNames: ['workflow', 'adapter', 'status'],
      buckets: RUN_BUCKETS,
      registers,
    }),
    stepDuration: new CountingHistogram({
      name: `${METRIC_PREFIX}step_duration_seconds`,
      help: 'Step duration (all attempts), by agent and final step status.',
      labelNames: ['agent', 'status'],
      buckets: RUN_BUCKETS,
      registers,
    }),
    activeRuns: new Gauge({
      name: `${METRIC_PREFIX}active_runs`,
      help: 'Runs currently active in the runtime.',
      registers,
      collect() {
        if (sources.activeRuns !== undefined) this.set(sources.activeRuns());
      },
    }),
    retries: new Counter({
      name: `${METRIC_PREFIX}step_retries_total`,
      help: 'Step attempts that failed and were retried, by agent.',
      labelNames: ['agent'],
      registers,
    }),
    runsResumed: new Counter({
      name: `${METRIC_PREFIX}runs_resumed_total`,
      help: 'Runs resumed in this process after the process running them stopped, by workflow and adapter.',
      labelNames: ['workflow', 'adapter'],
      registers,
    }),
    stepsReexecuted: new Counter({
      name: `${METRIC_PREFIX}steps_reexecuted_total`,
      help: 'Steps whose interrupted attempt a resumed run made again, by agent.',
      labelNames: ['agent'],
      registers,
    }),
    streamClients: new Gauge({
      name: `${METRIC_PREFIX}stream_clients`,
      help: 'WebSocket and SSE clients currently connected to run event streams, by transport.',
      labelNames: ['transport'],
      registers,
      collect() {
        if (sources.wsClients !== undefined) this.set({ transport: 'ws' }, sources.wsClients());
      },
    }),
    droppedClients: new Counter({
      name: `${METRIC_PREFIX}stream_clients_dropped_total`,
      help: 'Streaming clients dropped for not reading (slow clients), by transport.',
      labelNames: ['transport'],
      registers,
    }),
    replayEvictions: new Counter({
      name: `${METRIC_PREFIX}replay_evictions_total`,
      help: "Finished runs' replay buffers evicted to stay within the buffer limits.",
      registers,
    }),
    sanitizerFindings: new Counter({
      name: `${METRIC_PREFIX}sanitizer_findings_total`,
      help: 'Sanitizer findings in request bodies, by category and the request classification.',
      labelNames: ['category', 'classification'],
      registers,
    }),
    refusals: new Counter({
      name: `${METRIC_PREFIX}refusals_total`,
      help: 'Requests refused before their route: rate limit, auth lockout, missing or bad key.',
      labelNames: ['reason'],
      registers,
    }),
    llmCalls: new Counter({
      name: `${METRIC_PREFIX}llm_calls_total`,
      help: 'LLM provider calls, by provider, model and outcome (success or the error kind).',
      labelNames: ['provider', 'model', 'outcome'],
      registers,
    }),
    llmTokens: new Counter({
      name: `${METRIC_PREFIX}llm_tokens_total`,
      help: 'Tokens of successful LLM calls, by provider, model and direction (input, output).',
      labelNames: ['provider', 'model', 'direction'],
      registers,
    }),
    llmCost: new Counter({
      name: `${METRIC_PREFIX}llm_cost_usd_total`,
      help: 'USD spent on LLM calls at the price table (AGENTIC_PRICES_FILE), by provider and model.',
      labelNames: ['provider', 'model'],
      registers,
    }),
    llmUnpricedCalls: new Counter({
      name: `${METRIC_PREFIX}llm_unpriced_calls_total`,
      help: 'LLM calls that spent tokens on a model without a price (their cost is not in llm_cost_usd_total).',
      labelNames: ['provider', 'model'],
      registers,
    }),
    llmDuration: new Histogram({
      name: `${METRIC_PREFIX}llm_call_duration_seconds`,
      help: 'LLM provider call latency, by provider, model and outcome.',
      labelNames: ['provider', 'model', 'outcome'],
      buckets: LLM_BUCKETS,
      registers,
    }),
    llmBreaker: new Gauge({
      name: `${METRIC_PREFIX}llm_breaker_state`,
      help: "1 for each model's current circuit-breaker state (closed, open, half_open).",
      labelNames: ['model', 'state'],
      registers,
      collect() {
        if (sources.breakers === undefined) return;
        this.reset();
        for (const { model, state } of sources.breakers()) {
          this.set({ model: modelLabel(model), state }, 1);
        }
      },
    }),
    evaluations: new Counter({
      name: `${METRIC_PREFIX}evaluations_total`,
      help: 'Run evaluations finished, by rubric, grade and outcome (passed, failed, error).',
      labelNames: ['rubric', 'grade', 'outcome'],
      registers,
    }),
    toolCalls: new Counter({
      name: `${METRIC_PREFIX}tool_calls_total`,
      help: "Tool calls, by tool (built-in names; _unknown for others) and outcome (success, error: the tool failed, denied: by the approval gate, refused: not a tool, not in the step's tools:, or bad arguments).",
      labelNames: ['tool', 'outcome'],
      registers,
    }),
    approvals: new Counter({
      name: `${METRIC_PREFIX}approvals_total`,
      help: 'Approval decisions on high-risk tool calls, by decision (approve, deny) and approval provider.',
      labelNames: ['decision', 'provider'],
      registers,
    }),
    approvalProviderLabel: createBoundedLabel(MAX_NAME_LABELS),
    rubricLabel: createBoundedLabel(MAX_NAME_LABELS),
    gradeLabel: createBoundedLabel(MAX_NAME_LABELS),
    modelLabel,
    providerLabel: createBoundedLabel(MAX_NAME_LABELS),
    workflowLabel: createBoundedLabel(MAX_NAME_LABELS),
    agentLabel: createBoundedLabel(MAX_NAME_LABELS),
    adapterLabel: createBoundedLabel(MAX_NAME_LABELS),
    readGauges(next) {
      Object.assign(sources, next);
    },
  };
}
