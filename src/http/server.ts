/**
 * Starts the service: the runtime (whose start-up scan recovers interrupted run files and feeds
 * the history index, in the background), the event hub, the security guard and the app; listens
 * at once and attaches the WebSocket hub. `close()` is the
 * graceful shutdown: stop accepting, let running runs finish within the grace period, then
 * cancel them (persisted as failed), drain the run-file write queue, close WebSocket/SSE
 * clients and the server. Requests arriving meanwhile get 503 "shutting down" (shutdown-gate.ts).
 *
 * The optional subsystems are imported only when the configuration turns them on: the Redis
 * side (ioredis, BullMQ) with REDIS_URL, metrics (prom-client) with AGENTIC_METRICS, the
 * OpenTelemetry SDK and exporters with AGENTIC_TRACING (issue 25: they made start-up slow).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TracerProvider } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { stat } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import { createRuntime } from '../engine/runtime.js';
import { routerBreakers } from '../engine/run-explain.js';
import type { RunService, Runtime } from '../engine/types.js';
import { listAgents } from '../agents/agent-listing.js';
import { loadAgentCatalogue } from '../agents/catalogue.js';
import { customAgentNames } from '../agents/custom-agents.js';
import { packageVersion, shippedAgentCatalogue } from '../config/index.js';
import { createBatchManager, type BatchManager } from '../eval/batch.js';
import { createDatasetCatalogue } from '../eval/datasets.js';
import { resolveEvalDir } from '../eval/eval-dir.js';
import { createEvaluator } from '../eval/evaluator.js';
import { createDeterministicJudge, createLlmJudge } from '../eval/judge.js';
import { createEventHub, type EventHub } from '../events/hub.js';
import type { LlmClient } from '../llm/index.js';
import type { LlmService } from '../llm/llm-service.js';
import { createNoLlmClient } from '../llm/no-llm.js';
import { describeTierCircuits } from '../llm/tier-circuits.js';
import type { Logger } from '../log.js';
import { countEvaluation } from '../metrics/eval-observer.js';
import { observeRuntime } from '../metrics/run-observer.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { composeService } from '../service/compose.js';
import type { ScaleOut } from '../scale/scale-out.js';
import { createHistoryIndex, type HistoryIndex } from '../store/history.js';
import { createRetention } from '../store/retention.js';
import type { FileWriter } from '../store/write-thread.js';
import { otlpTracesUrl, TRACE_SERVICE_NAME } from '../tracing/otlp-endpoint.js';
import { createWorkflowRegistry } from '../workflow/index.js';
import { internalsOf } from '../engine/runtime-internals.js';
import { processTurnSlicer } from '../engine/turn-slicer.js';
import { loadAdapters } from './adapters.js';
import { createApp, type AgenticApp, type AppDeps } from './app.js';
import { createAuth } from './middleware/auth.js';
import { createRateLimiter } from './middleware/rate-limit.js';
import { createShutdownGate } from './shutdown-gate.js';
import { attachWebSocketHub } from './ws-hub.js';

export interface ServerOptions {
  config: Config;
  logger: Logger;
  /** An existing runtime (embedding, tests); created from `config` when absent. */
  runtime?: Runtime;
  /** Overrides for app dependencies (tests: SSE timings). */
  stream?: AppDeps['stream'];
  /**
   * The judge's LLM client; in no-LLM mode the deterministic judge is used.
   * @default the tier router of the service's LLM layer (`AGENTIC_JUDGE_MODEL`, else tier 2)
   */
  judgeLlm?: LlmClient;
  /** The run-file writer of the runtime created from `config` (tests inject failures). */
  writeFile?: FileWriter;
  /** The LLM layer (providers, router, probe). @default built from `config.llm` */
  llm?: LlmService;
  /**
   * The prom-client registry `/metrics` serves (AGENTIC_METRICS=1), e.g. an embedder's own
   * that already holds its metrics. @default a new Registry per server
   */
  metricsRegistry?: Registry;
  /**
   * The OpenTelemetry provider requests and runs are traced into, e.g. an embedder's own (the
   * service then neither creates nor shuts one down). Given, tracing is on whatever
   * AGENTIC_TRACING says. @default with AGENTIC_TRACING=1, the service's own OTLP provider
   */
  tracerProvider?: TracerProvider;
}

export interface RunningServer {
  server: Server;
  app: AgenticApp;
  /** What runs the service's runs: its runtime, or with `REDIS_URL` the run queue's facade. */
  runtime: RunService;
  history: HistoryIndex;
  hub: EventHub;
  /** Batch evaluations. */
  batches: BatchManager;
  llm: LlmService;
  /** The service's metrics, when AGENTIC_METRICS=1 (`metrics.registry` is what `/metrics` serves). */
  metrics?: ServiceMetrics;
  /** The Redis side (connections, keys, instance id, replay reader), when `REDIS_URL` is set. */
  scale?: ScaleOut;
  /** `http://host:port` actually bound (port 0 resolved). */
  url: string;
  port: number;
  /**
   * Graceful shutdown (idempotent). `exiting`: the process exits right after (see
   * `ShutdownOptions`).
   */
  close(options?: { exiting?: boolean }): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { config, logger } = options;
  // First: an unreachable Redis is a configuration error, before anything else is started.
  const scale =
    config.redisUrl === undefined
      ? undefined
      : await (await import('../scale/scale-out.js')).startScaleOut({ config, logger });
  try {
    return await startWith(options, scale);
  } catch (error) {
    // The Redis connections would keep a failed start's process alive.
    await scale?.close();
    throw error;
  }
}

async function startWith(
  options: ServerOptions,
  scale: ScaleOut | undefined,
): Promise<RunningServer> {
  const { config, logger } = options;
  const adapters = await loadAdapters(config.defaultAdapter);
  // The Redis side's modules load before anything starts, so the dispatch and its wiring below
  // are made in one synchronous stretch as before: no run's events pass between the two.
  const redisSide =
    scale === undefined
      ? undefined
      : await Promise.all([import('../scale/dispatch.js'), import('../scale/wiring.js')]).then(
          ([dispatchModule, wiringModule]) => ({ ...dispatchModule, ...wiringModule }),
        );
  await warnIfMissingWorkflowsDir(config, logger);
  const { agents, metrics, llm, tracerProvider, ownTracerProvider, runtimeOptions } =
    await composeService(config, {
      logger,
      ...(scale === undefined ? {} : { breakerSharing: scale.breakers }),
      ...(options.metricsRegistry === undefined
        ? {}
        : { metricsRegistry: options.metricsRegistry }),
      ...(options.llm === undefined ? {} : { llm: options.llm }),
      ...(options.tracerProvider === undefined ? {} : { tracerProvider: options.tracerProvider }),
      ...(options.writeFile === undefined ? {} : { writeFile: options.writeFile }),
    });
  const tracer = tracerProvider?.getTracer(TRACE_SERVICE_NAME, packageVersion);
  if (ownTracerProvider !== undefined) {
    logger.info(
      {
        protocol: config.otlpProtocol,
        url: otlpTracesUrl(config.otlpProtocol, config.otlpEndpoint),
        sensitive: config.traceSensitive,
        sampler: config.traceSampler,
      },
      'exporting traces over OTLP',
    );
  }

  const history = createHistoryIndex({
    runsDir: config.runsDir,
    logger,
    recordCacheBytes: config.runCacheBytes,
  });
  // With REDIS_URL runs go through the queue to workers (this process's own, in role `all`).
  const dispatch =
    options.runtime === undefined && redisSide !== undefined
      ? redisSide.startDispatch({ config, logger, runtime: runtimeOptions })
      : undefined;
  // The runtime's one start-up scan (recovery) feeds the index; an injected runtime did its own,
  // and runs dispatched to workers are indexed from the directory, so the index reads it itself.
  // Either way in the background: the service listens at once, and readiness and the history
  // endpoints answer 503 until the index is loaded.
  const runtime: RunService =
    options.runtime ??
    dispatch?.runs ??
    createRuntime({
      onStartupRecord: (record, filename) => history.addScanned(record, filename),
      ...runtimeOptions,
    });
  const indexedByRecovery = options.runtime === undefined && dispatch === undefined;
  // What executes runs in this process: the hub serves these from memory (others from the
  // shared replay store) and the publisher sends their events and records to Redis.
  const executor = dispatch === undefined ? runtime : dispatch.executor;
  const retention = createRetention({
    runsDir: config.runsDir,
    history,
    isActive: (runId) => runtime.isActive(runId),
    days: config.runsRetentionDays,
    max: config.runsMax,
    logger,
  });
  // Subscribed before loading so a run that starts meanwhile is not missed (upserts are idempotent).
  const offRecord = runtime.onRecord((record, filename) => {
    history.upsert(record, filename);
    retention.written(history.runCount);
  });
  const historyLoaded = (
    indexedByRecovery ? runtime.recovery.then(() => history.markLoaded()) : history.load()
  ).then(
    () => retention.prune(),
    (error: unknown) => {
      // Serve what was indexed rather than stay unready: the error names what to fix.
      logger.error({ err: error }, 'run history could not be loaded completely');
      history.markLoaded();
    },
  );
  // Metrics count what this process executes: an api instance's queued runs are counted by the
  // worker that runs them, so a deployment's series add up to each run once.
  const stopObserving = metrics === undefined ? undefined : observeRuntime(executor, metrics);
  const hub = createEventHub({
    ...(metrics === undefined ? {} : { onEviction: () => metrics.replayEvictions.inc() }),
    runtime: executor,
    history,
    finishedBuffers: config.finishedBuffers,
    finishedBuffersMaxBytes: config.finishedBuffersMaxBytes,
    logger,
    ...(scale === undefined ? {} : { remote: scale.remote }),
  });
  const wiring =
    scale === undefined || redisSide === undefined
      ? undefined
      : redisSide.wireScaleOut(scale, { runtime: executor, hub, history, config, logger });
  const datasets = createDatasetCatalogue({
    evalDir: resolveEvalDir(config.workflowsDir),
    localDir: config.localDatasetsDir,
    maxFileBytes: config.maxDatasetBytes,
    cacheBytes: config.datasetCacheBytes,
  });
  const evaluator = createEvaluator({
    datasets,
    judge: config.noLlm
      ? createDeterministicJudge()
      : createLlmJudge({
          llm: options.judgeLlm ?? llm.router,
          model: config.judgeModel,
        }),
    runsDir: config.runsDir,
    persist: runtime.options.persist,
    onScored: (record, filename) => history.upsert(record, filename),
    publish: (event) => {
      hub.publish(event);
      if (metrics !== undefined) countEvaluation(metrics, event);
    },
    logger,
  });
  const batches = createBatchManager({ runtime, evaluator, datasets });
  // With Redis the limits hold across instances (falling back to per-instance ones while Redis
  // is away); without it they are the in-process limiters.
  const guard = createAuth(config, {
    logger,
    ...(wiring === undefined ? {} : { lockout: wiring.lockout }),
  });
  const rateLimit = createRateLimiter(
    config,
    wiring === undefined ? {} : { window: wiring.rateWindow },
  );
  // The runtime's registry (one per runtime: its custom agents, its compiled-workflow cache); a
  // `Runtime` not made by createRuntime gets one of the service's own.
  const registry =
    internalsOf(runtime)?.workflows ??
    createWorkflowRegistry({
      dir: config.workflowsDir,
      readOnlyReason: config.workflowsReadOnlyReason,
      customAgents: customAgentNames(agents),
      limits: config.limits,
    });
  // Requests and upgrades take turn slots from the process's slicer, so one budget per turn holds
  // for them, the runtimes' run starts and ends, and the model streams' chunks.
  const slicer = processTurnSlicer();
  const agentSources = {
    files: [shippedAgentCatalogue()],
    dirs: config.externalAgentsDir === undefined ? [] : [config.externalAgentsDir],
    limits: config.limits,
  };
  const app = createApp(runtime, config, {
    logger,
    history,
    hub,
    guard,
    rateLimit,
    registry,
    loadAgents: async () => listAgents(await loadAgentCatalogue(agentSources), Object.keys(agents)),
    ...(internalsOf(runtime) === undefined ? {} : { tools: internalsOf(runtime)!.tools }),
    machineDefinition: adapters.machineDefinition,
    datasets,
    evaluator,
    batches,
    llm: {
      probe: (signal) => llm.probe(signal),
      tiers: () => describeTierCircuits(llm.chains, llm.router),
      client: config.noLlm ? createNoLlmClient() : llm.router,
    },
    ...(options.stream !== undefined ? { stream: options.stream } : {}),
    ...(metrics !== undefined ? { metrics } : {}),
    ...(tracer === undefined ? {} : { tracer }),
    ...(scale === undefined
      ? {}
      : {
          dependencyChecks: {
            redis: () => scale.check(),
            ...(dispatch === undefined ? {} : { queue: () => dispatch.checkQueue() }),
          },
          admitRun: () => scale.admit(),
        }),
    slicer,
    explain: {
      ...(dispatch?.workerRuntime === undefined ? {} : { local: dispatch.workerRuntime }),
      ...(config.noLlm ? {} : { breakers: routerBreakers(llm.router) }),
    },
  });

  const handle = app.callback();
  const gate = createShutdownGate((req, res) => void handle(req, res), logger);
  const server = createServer(gate.handle);
  const wsHub = attachWebSocketHub(server, {
    hub,
    history,
    guard,
    rateLimit,
    config,
    logger,
    slicer,
    ...(metrics !== undefined ? { metrics } : {}),
    ...(tracer === undefined ? {} : { tracer }),
  });
  metrics?.readGauges({ wsClients: () => wsHub.clientCount });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    {
      url,
      adapter: config.defaultAdapter,
      runsDir: config.runsDir,
      workflowsDir: config.workflowsDir,
      workflowsSource: config.workflowsSource,
    },
    'agentic-runtime listening',
  );
  // The start-up probe only informs the log; it never delays or fails the start.
  const startupProbe = new AbortController();
  llm.probe(startupProbe.signal).then(
    (probe) =>
      logger.info(
        {
          available: probe.available_providers,
          unavailable: probe.unavailable_reasons,
          tierDefaults: probe.tier_defaults,
        },
        'LLM providers probed',
      ),
    (error: unknown) => logger.warn({ err: error }, 'LLM provider probe failed'),
  );

  let closing: Promise<void> | undefined;
  async function shutdown(exiting: boolean): Promise<void> {
    gate.close();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const active = runtime.activeRuns().length;
    if (active > 0)
      logger.info({ active, graceSeconds: config.shutdownGraceSeconds }, 'waiting for runs');
    const batchesClosed = batches.close();
    await runtime.shutdown({ graceMs: config.shutdownGraceSeconds * 1000, exiting });
    // MCP calls waiting for their runs have their answers by now; sessions and streams close.
    await app.mcp.close();
    await dispatch?.close(config.shutdownGraceSeconds * 1000, exiting);
    await historyLoaded;
    await retention.stop();
    // Runs that ended during the shutdown are still scored and their evaluation events sent;
    // judge calls in flight are aborted (reported as judge failures) rather than awaited.
    await evaluator.drain({ abort: true });
    await batchesClosed;
    await wsHub.close();
    hub.close();
    wiring?.stop();
    await scale?.close();
    startupProbe.abort();
    await llm.close();
    offRecord();
    stopObserving?.();
    server.closeAllConnections();
    await closed;
    // Last: the spans of the runs and requests that ended above are exported before exit.
    await ownTracerProvider?.shutdown().catch((error: unknown) => {
      logger.warn({ err: error }, 'traces could not be flushed');
    });
    if (gate.refused > 0)
      logger.info({ refused: gate.refused }, 'requests refused while shutting down');
    logger.info('agentic-runtime stopped');
  }

  return {
    server,
    app,
    runtime,
    history,
    hub,
    batches,
    llm,
    ...(metrics !== undefined ? { metrics } : {}),
    ...(scale !== undefined ? { scale } : {}),
    url,
    port: address.port,
    close({ exiting = false } = {}) {
      closing ??= shutdown(exiting);
      return closing;
    },
  };
}

/** A missing workflows directory is not fatal (workflows can be sent inline) but is surprising. */
async function warnIfMissingWorkflowsDir(config: Config, logger: Logger): Promise<void> {
  const info = await stat(config.workflowsDir).catch(() => undefined);
  if (info?.isDirectory() === true) return;
  logger.warn(
    { workflowsDir: config.workflowsDir },
    'workflows directory not found: no named workflows until it exists (set AGENTIC_WORKFLOWS_DIR or create ./workflows)',
  );
}
