/**
 * A worker process (`AGENTIC_ROLE=worker npm start`, `agentic worker`): executes queued runs,
 * listens on no port. It starts only when Redis answers (else one configuration error, exit 1),
 * logs what it serves, and on SIGTERM/SIGINT stops taking runs, lets its running runs finish
 * within `AGENTIC_SHUTDOWN_GRACE_SECONDS` (then cancels them: they end recorded as failed) and
 * exits 0; a second signal exits at once with 1.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { loadAgentsModule } from '../agents/agents-module.js';
import type { Config } from '../config/index.js';
import { createLlmService } from '../llm/llm-service.js';
import type { Logger } from '../log.js';
import { startDispatch, type Dispatch } from './dispatch.js';
import { createScaleKeys } from './keys.js';
import { openRedis, redactRedisUrl } from './redis-connection.js';
import { attachRunPublisher } from './run-publisher.js';
import { runtimeOptionsFromConfig } from './runtime-config.js';

/** A started worker: `close` is the graceful shutdown (idempotent). */
export interface RunningWorker {
  dispatch: Dispatch;
  close(): Promise<void>;
}

/** Starts the worker of `config` (its Redis already checked reachable). */
export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  await mkdir(config.runsDir, { recursive: true });
  const agents =
    config.agentsModule === undefined ? {} : await loadAgentsModule(config.agentsModule);
  const llm = createLlmService(config.llm);
  const dispatch = startDispatch({
    config,
    logger,
    role: 'worker',
    runtime: runtimeOptionsFromConfig(config, { logger, llm: llm.router, agents }),
  });
  // The runs' events and records go to the shared replay store, for every api instance.
  const redis = openRedis({ url: config.redisUrl ?? '', logger, name: 'publisher' });
  const detachPublisher = attachRunPublisher(dispatch.executor, {
    redis,
    keys: createScaleKeys(config.redisPrefix),
    streamTtlMs: config.eventStreamTtlMs,
    instanceId: randomUUID(),
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
    await redis.quit().catch(() => redis.disconnect());
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
