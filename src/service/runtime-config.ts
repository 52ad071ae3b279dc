/**
 * The pieces compose.ts assembles, each from the configuration: the runtime options (of the
 * runtime of a single process, the workers' runtimes, an api instance's checks of the runs it
 * queues, and a CLI command's runtime), the LLM layer observed by the metrics, and the OTLP
 * tracer provider.
 */
import type { TracerProvider } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { Agent } from '../agents/types.js';
import { packageVersion, type Config } from '../config/index.js';
import { processTurnSlicer } from '../engine/turn-slicer.js';
import type { BudgetOptions, RuntimeOptions } from '../engine/types.js';
import { callCostUsd, loadPriceTable, type PriceTable } from '../llm/prices.js';
import { createLlmService, type LlmService } from '../llm/llm-service.js';
import type { LlmRouter, RouterOptions } from '../llm/router.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import { createLlmCallObserver } from '../metrics/llm-observer.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { EmbeddingProviders } from '../memory/provider-embedder.js';
import type { FileWriter } from '../store/write-thread.js';
import { toolsOptionsFromConfig, type ToolsOptions } from '../tools/index.js';

export interface RuntimeParts {
  logger: Logger;
  /** The LLM layer's router. @default none (a command in no-LLM mode) */
  llm?: LlmClient;
  /** The LLM layer's price table (run budgets' dollars). @default read from the config's file */
  prices?: PriceTable;
  /** The LLM layer's providers (the vector memory store's embeddings). @default none */
  providers?: EmbeddingProviders;
  /** The custom agents of `AGENTIC_AGENTS_MODULE`. */
  agents: Readonly<Record<string, Agent>>;
  /** Tool call reports (metrics). @default none */
  onToolCall?: ToolsOptions['onToolCall'];
  /** Run and step spans (tracing). @default none */
  tracerProvider?: TracerProvider;
  writeFile?: FileWriter;
}

export function runtimeOptionsFromConfig(config: Config, parts: RuntimeParts): RuntimeOptions {
  return {
    workflowsDir: config.workflowsDir,
    ...(config.workflowsReadOnlyReason !== undefined
      ? { workflowsReadOnlyReason: config.workflowsReadOnlyReason }
      : {}),
    runsDir: config.runsDir,
    noLlm: config.noLlm,
    ...(parts.llm === undefined ? {} : { llm: parts.llm }),
    maxConcurrency: config.maxConcurrency,
    maxActiveRuns: config.maxActiveRuns,
    ...(config.maxRunsHeldBytes === undefined ? {} : { maxRunsHeldBytes: config.maxRunsHeldBytes }),
    stepTimeoutMs: config.stepTimeoutMs,
    budgets: {
      price: budgetPricer(parts.prices ?? loadPriceTable(config.pricesFile)),
      stepDownAt: config.budgetStepDownAt,
      callMaxTokens: config.budgetCallMaxTokens,
      // A call's worst-case cost is the dearest model its tier chain (or pin) may go to.
      ...(parts.llm !== undefined && 'candidates' in parts.llm
        ? {
            candidates: (tier: number, model?: string) =>
              (parts.llm as LlmRouter).candidates(tier, model),
          }
        : {}),
    },
    defaultAdapter: config.defaultAdapter,
    logger: parts.logger,
    writeConcurrency: config.writeConcurrency,
    writeSync: config.writeSync,
    writeQueueMax: config.writeQueueMax,
    writeRetryMaxMs: config.writeRetryMaxMs,
    ownerLeaseMs: config.ownerLeaseMs,
    resume: config.resume,
    limits: config.limits,
    tools: {
      ...toolsOptionsFromConfig(config, parts.providers),
      ...(parts.onToolCall === undefined ? {} : { onToolCall: parts.onToolCall }),
    },
    ...(parts.tracerProvider === undefined
      ? {}
      : { tracerProvider: parts.tracerProvider, traceSensitive: config.traceSensitive }),
    ...(parts.writeFile !== undefined ? { writeFile: parts.writeFile } : {}),
    agents: parts.agents,
    ...(config.externalAgentsDir !== undefined
      ? { externalAgentsDir: config.externalAgentsDir }
      : {}),
  };
}

/**
 * Prices a budgeted run's model calls with the price table (`AGENTIC_PRICES_FILE`, else the
 * shipped one): their worst case before the call, and a call its client did not price.
 */
function budgetPricer(table: PriceTable): NonNullable<BudgetOptions['price']> {
  return (model, usage) => callCostUsd(table, model, usage);
}

/**
 * The LLM layer of `config`, its calls reported to `metrics`; with `breakerSharing`, the
 * circuits are the deployment's (shared through Redis).
 */
export function createObservedLlm(
  config: Config,
  metrics: ServiceMetrics | undefined,
  breakerSharing?: RouterOptions['breakerSharing'],
): LlmService {
  const slicer = processTurnSlicer();
  return createLlmService(config.llm, {
    // The model streams' chunks share the loop turns' budget with run starts and requests.
    pace: () => slicer.slot(),
    ...(metrics === undefined ? {} : { onCall: createLlmCallObserver(metrics) }),
    ...(breakerSharing === undefined ? {} : { breakerSharing }),
  });
}

/**
 * The OTLP tracer provider `config` asks for (AGENTIC_TRACING=1); none when tracing is off.
 * The OpenTelemetry SDK and exporters are imported only then (issue 25: start-up).
 */
export async function tracerProviderFromConfig(
  config: Config,
): Promise<BasicTracerProvider | undefined> {
  if (!config.tracing) return undefined;
  const { createOtlpTracerProvider } = await import('../tracing/otlp-provider.js');
  return createOtlpTracerProvider({
    protocol: config.otlpProtocol,
    endpoint: config.otlpEndpoint,
    serviceVersion: packageVersion,
    sampler: config.traceSampler,
  });
}
