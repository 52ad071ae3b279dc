/**
 * A worker process (`AGENTIC_ROLE=worker npm start`, `agentic worker`): executes queued runs,
 * listens on no port. It starts only when Redis answers (else one configuration error, exit 1),
 * logs what it serves, and on SIGTERM/SIGINT stops taking runs, lets its running runs finish
 * within `AGENTIC_SHUTDOWN_GRACE_SECONDS` (then cancels them: they end recorded as failed) and
 * exits 0; a second signal exits at once with 1.
 */
import { mkdir } from 'node:fs/promises';
import { loadAgentsModule } from '../agents/agents-module.js';
import type { Config } from '../config/index.js';
import { createLlmService } from '../llm/llm-service.js';
import type { Logger } from '../log.js';
import { startDispatch, type Dispatch } from './dispatch.js';
import { redactRedisUrl } from './redis-connection.js';
import { attachRunPublisher } from './run-publisher.js';
import { runtimeOptionsFromConfig } from './runtime-config.js';
import { startScaleOut, type ScaleOut } from './scale-out.js';

/** A started worker: `close` is the graceful shutdown (idempotent). */
export interface RunningWorker {
  dispatch: Dispatch;
  close(): Promise<void>;
}

/**
 * Starts the worker of `config`: its Redis side first (an unreachable Redis is a configuration
 * error), then the runtime and the queue worker.
 */
export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  const scale = await startScaleOut({ config, logger });
  try {
    return await startWith(config, logger, scale);
  } catch (error) {
    // The Redis connections would keep a failed start's process alive.
    await scale.close();
    throw error;
  }
}

async function startWith(config: Config, logger: Logger, scale: ScaleOut): Promise<RunningWorker> {
  await mkdir(config.runsDir, { recursive: true });
  const agents =
    config.agentsModule === undefined ? {} : await loadAgentsModule(config.agentsModule);
  // Circuit states are the deployment's: a provider failing for one worker is skipped by all.
  const llm = createLlmService(config.llm, { breakerSharing: scale.breakers });
  const dispatch = startDispatch({
    config,
    logger,
    role: 'worker',
    runtime: runtimeOptionsFromConfig(config, {
      logger,
      llm: llm.router,
      providers: llm.providers,
      agents,
    }),
  });
  // The runs' events and records go to the shared replay store, for every api instance.
  const detachPublisher = attachRunPublisher(dispatch.executor, {
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
    },
    'agentic-runtime worker started',
  );
  let closing: Promise<void> | undefined;
  async function shutdown(): Promise<void> {
    const active = dispatch.workerRuntime?.activeRuns().length ?? 0;
    logger.info({ active, graceSeconds: config.shutdownGraceSeconds }, 'worker stopping');
    await dispatch.close(config.shutdownGraceSeconds * 1000);
    detachPublisher();
    // QUIT waits for the replies of what was sent (the last events of the last runs).
    await scale.close();
    await llm.close();
    logger.info('agentic-runtime worker stopped');
  }
  return {
    dispatch,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}

/** Installs the signal handling of a service process around `close`. */
export function onStopSignals(logger: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
