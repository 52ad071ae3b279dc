/**
 * A worker process (`AGENTIC_ROLE=worker npm start`, `agentic worker`): executes queued runs.
 * It starts only when Redis answers (else one configuration error, exit 1), logs what it
 * serves, and on SIGTERM/SIGINT stops taking runs, lets its running runs finish within
 * `AGENTIC_SHUTDOWN_GRACE_SECONDS` (then cancels them: they end recorded as failed) and exits
 * 0; a second signal exits at once with 1.
 *
 * Its runtime is observed like a service's: with AGENTIC_METRICS=1 the runs, steps, retries,
 * model and tool calls it executes go to its own registry, which the endpoint of
 * `AGENTIC_WORKER_PORT` serves (the HTTP layer provides it through {@link WorkerOptions.serve};
 * without a port the worker listens on none); with AGENTIC_TRACING=1 its run spans continue the
 * traces of the requests that queued them (the job carries `traceparent`).
 */
import type { Config } from '../config/index.js';
import type { Runtime } from '../engine/types.js';
import type { Logger } from '../log.js';
import { observeRuntime, type ServiceMetrics } from '../metrics/index.js';
import { otlpTracesUrl } from '../tracing/otlp-endpoint.js';
import { createWorkerRuntime, startDispatch, type Dispatch } from './dispatch.js';
import { redactRedisUrl } from './redis-connection.js';
import { createRunClaims } from './run-claims.js';
import { attachRunPublisher } from './run-publisher.js';
import { composeService } from '../service/compose.js';
import { startScaleOut, type ScaleOut } from './scale-out.js';

/** What a worker's endpoint serves: its metrics, and what its readiness checks. */
export interface WorkerEndpointParts {
  config: Config;
  logger: Logger;
  /** The worker's metrics (AGENTIC_METRICS=1). */
  metrics: ServiceMetrics | undefined;
  /** The runtime executing the worker's runs (run writes, active runs). */
  runtime: Runtime;
  scale: ScaleOut;
  /** Readiness checks by name: `redis` and `queue`; each rejects with a safe message. */
  dependencyChecks: Readonly<Record<'redis' | 'queue', () => Promise<void>>>;
}

/** A listening worker endpoint. */
export interface WorkerEndpoint {
  /** `http://host:port` actually bound (port 0 resolved). */
  url: string;
  close(): Promise<void>;
}

export interface WorkerOptions {
  /**
   * Starts the worker's HTTP endpoint (metrics, health) when `config.workerPort` is set.
   * @default none: the worker listens on no port
   */
  serve?: (parts: WorkerEndpointParts) => Promise<WorkerEndpoint>;
}

/** A started worker: `close` is the graceful shutdown (idempotent). */
export interface RunningWorker {
  dispatch: Dispatch;
  /** Its metrics, when AGENTIC_METRICS=1. */
  metrics?: ServiceMetrics;
  /** Its endpoint's URL, when it listens (`config.workerPort` and a `serve`). */
  url?: string;
  /** `exiting`: the process exits right after (see `ShutdownOptions`). */
  close(options?: { exiting?: boolean }): Promise<void>;
}

/**
 * Starts the worker of `config`: its Redis side first (an unreachable Redis is a configuration
 * error), then the runtime and the queue worker.
 */
export async function startWorker(
  config: Config,
  logger: Logger,
  options: WorkerOptions = {},
): Promise<RunningWorker> {
  const scale = await startScaleOut({ config, logger });
  try {
    return await startWith(config, logger, scale, options);
  } catch (error) {
    // The Redis connections would keep a failed start's process alive.
    await scale.close();
    throw error;
  }
}

async function startWith(
  config: Config,
  logger: Logger,
  scale: ScaleOut,
  options: WorkerOptions,
): Promise<RunningWorker> {
  // Circuit states are the deployment's: a provider failing for one worker is skipped by all.
  const {
    metrics,
    llm,
    ownTracerProvider: tracerProvider,
    runtimeOptions,
  } = await composeService(config, { logger, breakerSharing: scale.breakers });
  const runtime = createWorkerRuntime(
    config,
    runtimeOptions,
    createRunClaims(scale.redis, scale.keys),
    logger,
  );
  // The endpoint is bound before the queue worker takes anything: a port in use fails the
  // start with nothing to hand back (and BullMQ's worker is not closed while it starts).
  let checkQueue = (): Promise<void> =>
    Promise.reject(new Error('the run queue worker is starting'));
  let endpoint: WorkerEndpoint | undefined;
  if (config.workerPort !== undefined && options.serve !== undefined) {
    try {
      endpoint = await options.serve({
        config,
        logger,
        metrics,
        runtime,
        scale,
        dependencyChecks: {
          redis: () => scale.check(),
          queue: () => checkQueue(),
        },
      });
    } catch (error) {
      await runtime.shutdown({ graceMs: 0 });
      await llm.close();
      await tracerProvider?.shutdown();
      throw error;
    }
  }
  const started = startDispatch({
    config,
    logger,
    role: 'worker',
    runtime: runtimeOptions,
    workerRuntime: runtime,
  });
  checkQueue = () => started.checkQueue();
  // The worker's events, the ends of dead workers' runs it finalises included: counted here.
  const stopObserving =
    metrics === undefined ? undefined : observeRuntime(started.executor, metrics);
  // The runs' events and records go to the shared replay store, for every api instance.
  const detachPublisher = attachRunPublisher(started.executor, {
    redis: scale.redis,
    keys: scale.keys,
    streamTtlMs: config.eventStreamTtlMs,
    instanceId: scale.instanceId,
    logger,
  });
  logger.info(
    {
      redis: redactRedisUrl(config.redisUrl ?? ''),
      concurrency: config.workerConcurrency,
      runsDir: config.runsDir,
      workflowsDir: config.workflowsDir,
      adapter: config.defaultAdapter,
      ...(endpoint === undefined ? {} : { url: endpoint.url, metrics: metrics !== undefined }),
      ...(tracerProvider === undefined
        ? {}
        : { traces: otlpTracesUrl(config.otlpProtocol, config.otlpEndpoint) }),
    },
    'agentic-runtime worker started',
  );
  let closing: Promise<void> | undefined;
  async function shutdown(exiting: boolean): Promise<void> {
    const active = runtime.activeRuns().length;
    logger.info({ active, graceSeconds: config.shutdownGraceSeconds }, 'worker stopping');
    await started.close(config.shutdownGraceSeconds * 1000, exiting);
    detachPublisher();
    // Probes and scrapes are answered until the runs have ended.
    await endpoint?.close();
    stopObserving?.();
    // QUIT waits for the replies of what was sent (the last events of the last runs).
    await scale.close();
    await llm.close();
    // Last: the spans of the runs that ended above are exported before exit.
    await tracerProvider?.shutdown().catch((error: unknown) => {
      logger.warn({ err: error }, 'traces could not be flushed');
    });
    logger.info('agentic-runtime worker stopped');
  }
  return {
    dispatch: started,
    ...(metrics === undefined ? {} : { metrics }),
    ...(endpoint === undefined ? {} : { url: endpoint.url }),
    close({ exiting = false } = {}) {
      closing ??= shutdown(exiting);
      return closing;
    },
  };
}
