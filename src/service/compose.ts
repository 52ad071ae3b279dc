/**
 * The composition root: what the HTTP service, a scale-out worker and a one-shot CLI command
 * build from one configuration, in one place. The service and a worker share everything but
 * their transport (`composeService`); a command gets the same runtime options with its log on
 * stderr and no metrics or tracing (`composeCommandRuntime`). Optional subsystems (metrics,
 * tracing) are imported only when the configuration turns them on (issue 25: start-up).
 */
import type { TracerProvider } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { mkdir } from 'node:fs/promises';
import type { Registry } from 'prom-client';
import { loadAgentsModule } from '../agents/agents-module.js';
import type { Agent } from '../agents/types.js';
import type { Config } from '../config/index.js';
import { createRuntime } from '../engine/runtime.js';
import type { Runtime, RuntimeOptions } from '../engine/types.js';
import type { LlmService } from '../llm/llm-service.js';
import type { RouterOptions } from '../llm/router.js';
import { createLogger, type Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { createToolCallObserver } from '../metrics/tool-observer.js';
import type { FileWriter } from '../store/write-thread.js';
import {
  createObservedLlm,
  runtimeOptionsFromConfig,
  tracerProviderFromConfig,
} from './runtime-config.js';

export interface ComposeOptions {
  logger: Logger;
  /** Circuit states shared by the deployment (through Redis). @default per process */
  breakerSharing?: RouterOptions['breakerSharing'];
  /** Where the metrics register (AGENTIC_METRICS=1). @default a new registry */
  metricsRegistry?: Registry;
  /** An LLM layer of the caller's; its calls are not reported to the metrics. */
  llm?: LlmService;
  /** A tracer provider of the caller's (who shuts it down); none is made from the config then. */
  tracerProvider?: TracerProvider;
  /** Replaces the run files' write thread (tests). */
  writeFile?: FileWriter;
}

/** The parts of a service process (single, api instance or worker). */
export interface ComposedService {
  /** The custom agents of `AGENTIC_AGENTS_MODULE`. */
  agents: Readonly<Record<string, Agent>>;
  /** The service's metrics, when AGENTIC_METRICS=1. */
  metrics: ServiceMetrics | undefined;
  /** The LLM layer (its router, providers and breakers). */
  llm: LlmService;
  /** The tracer provider runs and requests are traced into, when tracing is on or given. */
  tracerProvider: TracerProvider | undefined;
  /** The provider made here from the config: its owner (the service) flushes it at close. */
  ownTracerProvider: BasicTracerProvider | undefined;
  /** The options of the runtime executing this process's runs. */
  runtimeOptions: RuntimeOptions;
}

/** The custom agents of `AGENTIC_AGENTS_MODULE`, or none. */
function configuredAgents(config: Config): Promise<Readonly<Record<string, Agent>>> {
  return config.agentsModule === undefined
    ? Promise.resolve({})
    : loadAgentsModule(config.agentsModule);
}

/**
 * Builds what a service process runs on from `config`: the runs directory, the custom agents,
 * the metrics, the LLM layer (its calls and breakers observed by the metrics), the tracer
 * provider and the runtime options.
 */
export async function composeService(
  config: Config,
  options: ComposeOptions,
): Promise<ComposedService> {
  await mkdir(config.runsDir, { recursive: true });
  const agents = await configuredAgents(config);
  const metrics = config.metrics
    ? (await import('../metrics/service-metrics.js')).createServiceMetrics(
        options.metricsRegistry === undefined ? {} : { registry: options.metricsRegistry },
      )
    : undefined;
  // An injected LLM layer reports no calls (its router was built without this observer).
  const llm = options.llm ?? createObservedLlm(config, metrics, options.breakerSharing);
  metrics?.readGauges({ breakers: () => llm.router.breakerStates() });
  const ownTracerProvider =
    options.tracerProvider === undefined ? await tracerProviderFromConfig(config) : undefined;
  const tracerProvider = options.tracerProvider ?? ownTracerProvider;
  const runtimeOptions = runtimeOptionsFromConfig(config, {
    logger: options.logger,
    llm: llm.router,
    providers: llm.providers,
    prices: llm.prices,
    agents,
    ...(metrics === undefined ? {} : { onToolCall: createToolCallObserver(metrics) }),
    ...(tracerProvider === undefined ? {} : { tracerProvider }),
    ...(options.writeFile !== undefined ? { writeFile: options.writeFile } : {}),
  });
  return { agents, metrics, llm, tracerProvider, ownTracerProvider, runtimeOptions };
}

/**
 * The runtime of a one-shot command (`run`, `eval`): the service's runtime options from the same
 * configuration (limits, timeouts, write settings, tools), logging warnings and errors to
 * stderr so stdout keeps the command's output. `llm` is the command's LLM layer (undefined in
 * no-LLM mode; the caller closes it); `inspect` the inspector of `run --inspect`.
 */
export async function composeCommandRuntime(
  config: Config,
  llm: LlmService | undefined,
  inspect?: RuntimeOptions['inspect'],
): Promise<Runtime> {
  const agents = await configuredAgents(config);
  const logger = createLogger({
    format: config.logFormat,
    level: 'warn',
    destination: process.stderr,
  });
  return createRuntime({
    ...runtimeOptionsFromConfig(config, {
      logger,
      ...(llm === undefined
        ? {}
        : { llm: llm.router, providers: llm.providers, prices: llm.prices }),
      agents,
    }),
    ...(inspect === undefined ? {} : { inspect }),
  });
}
