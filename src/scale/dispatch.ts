/**
 * The dispatch side of a process with `REDIS_URL`: its Redis connections, the run queue, the
 * run claims, and what its role asks for. An `api` instance gets the queued runtime (runs go to
 * the queue); a `worker` gets a run worker executing queued runs on a runtime of its own;
 * `all` gets both, so two `all` processes share their runs through the queue. `close` ends
 * them in order: no more runs accepted, running runs finished (or cancelled after the grace
 * period) and recorded, then the connections.
 */
import type { Config } from '../config/index.js';
import { createRuntime } from '../engine/runtime.js';
import type { RunService, Runtime, RuntimeOptions } from '../engine/types.js';
import type { Logger } from '../log.js';
import { createQueuedRuntime } from './queued-runtime.js';
import { openRedis } from './redis-connection.js';
import { createRunClaims } from './run-claims.js';
import { createRunQueue } from './run-queue.js';
import { createRunWorker, type RunWorker } from './run-worker.js';

export interface DispatchOptions {
  config: Config;
  logger: Logger;
  /** The runtime options of this process (runtime-config.ts). */
  runtime: RuntimeOptions;
  /** Which parts to start. @default from `config.role` */
  role?: Config['role'];
}

export interface Dispatch {
  /** The api side (roles `api` and `all`). */
  runs: RunService | undefined;
  /** The worker (roles `worker` and `all`). */
  worker: RunWorker | undefined;
  /** The worker's runtime. */
  workerRuntime: Runtime | undefined;
  /** Ends everything (see the module comment); runs get `graceMs` to finish. */
  close(graceMs: number): Promise<void>;
}

/** Starts the dispatch parts of `role` on `config.redisUrl` (checked reachable beforehand). */
export function startDispatch(options: DispatchOptions): Dispatch {
  const { config, logger } = options;
  const url = config.redisUrl;
  if (url === undefined) throw new Error('startDispatch needs REDIS_URL');
  const role = options.role ?? config.role;
  const prefix = config.redisPrefix;
  const connections = {
    commands: openRedis({ url, logger, name: 'claims' }),
    queue: openRedis({ url, logger, name: 'queue', blocking: true }),
    changes: openRedis({ url, logger, name: 'claims-changes', blocking: true }),
    worker: openRedis({ url, logger, name: 'worker', blocking: true }),
    cancels: openRedis({ url, logger, name: 'claims-cancel', blocking: true }),
  };
  const claims = createRunClaims(connections.commands, prefix);

  let workerRuntime: Runtime | undefined;
  let worker: RunWorker | undefined;
  if (role !== 'api') {
    // A worker's runtime runs what the queue gives it: its concurrency is the limit.
    workerRuntime = createRuntime({
      ...options.runtime,
      maxActiveRuns: config.workerConcurrency,
    });
    worker = createRunWorker({
      runtime: workerRuntime,
      claims,
      connection: connections.worker,
      subscriber: connections.cancels,
      prefix,
      concurrency: config.workerConcurrency,
      lockMs: config.workerLockMs,
      logger,
    });
  }
  const queue = role === 'worker' ? undefined : createRunQueue(connections.queue, prefix);
  queue?.on('error', (error) => logger.warn({ err: error.message }, 'run queue error'));
  const runs =
    queue === undefined
      ? undefined
      : createQueuedRuntime({
          runtime: options.runtime,
          queue,
          claims,
          subscriber: connections.changes,
          // Until the deployment's event streams carry them, the runs this process executes.
          ...(worker === undefined ? {} : { events: worker }),
        });

  return {
    runs,
    worker,
    workerRuntime,
    async close(graceMs) {
      await runs?.shutdown({ graceMs });
      await worker?.close(graceMs);
      await queue?.close();
      for (const connection of Object.values(connections)) {
        await connection.quit().catch(() => connection.disconnect());
      }
    },
  };
}
