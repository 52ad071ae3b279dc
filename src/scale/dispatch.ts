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
import { RUN_STREAM_MAXLEN, createScaleKeys } from './keys.js';
import { closeConnection, closeWithin } from './quiet-close.js';
import { openRedis } from './redis-connection.js';
import { createRunClaims, type RunClaims } from './run-claims.js';
import { takeoverHooks } from './run-takeover.js';
import { RUN_QUEUE, createRunQueue } from './run-queue.js';
import { createRunWorker, type RunWorker } from './run-worker.js';
import { createSharedApprovals, shareApprovals } from './shared-approvals.js';
import { decodeStreamEntry } from './stream-entry.js';

export interface DispatchOptions {
  config: Config;
  logger: Logger;
  /** The runtime options of this process (runtime-config.ts). */
  runtime: RuntimeOptions;
  /** Which parts to start. @default from `config.role` */
  role?: Config['role'];
  /**
   * The runtime the worker executes runs on (a worker process makes it first, for its
   * endpoint). @default one made from `runtime`, `AGENTIC_WORKER_CONCURRENCY` runs at most
   */
  workerRuntime?: Runtime;
}

export interface Dispatch {
  /** The api side (roles `api` and `all`). */
  runs: RunService | undefined;
  /** The worker (roles `worker` and `all`). */
  worker: RunWorker | undefined;
  /** The worker's runtime. */
  workerRuntime: Runtime | undefined;
  /**
   * What executes runs in this process: the worker, or for an api instance nothing (no events,
   * no records, no run active here). The event hub serves these runs from memory, the run
   * publisher sends their events and records to the shared replay store, and the run metrics
   * count them (an api instance counts none: each run is counted once, by its worker).
   */
  executor: Pick<Runtime, 'subscribe' | 'onRecord' | 'isActive' | 'activeRuns'>;
  /** Readiness: rejects with a safe message when the run queue does not answer. */
  checkQueue(): Promise<void>;
  /**
   * Ends everything (see the module comment); runs get `graceMs` to finish. `exiting`: the
   * process exits right after (see `ShutdownOptions`).
   */
  close(graceMs: number, exiting?: boolean): Promise<void>;
}

/** How long the readiness check waits for the queue. */
const QUEUE_CHECK_MS = 1_000;

/** The executor of an api instance: runs execute elsewhere. */
const NOTHING_EXECUTES: Dispatch['executor'] = {
  subscribe: () => () => undefined,
  onRecord: () => () => undefined,
  isActive: () => false,
  activeRuns: () => [],
};

/**
 * A worker's runtime: it runs what the queue gives it, so its concurrency is the limit. With
 * the deployment's `claims`, a dead worker's run is resumed by one worker only and a run taken
 * over elsewhere is fenced off (run-takeover.ts).
 */
export function createWorkerRuntime(
  config: Config,
  runtime: RuntimeOptions,
  claims?: RunClaims,
  logger?: Logger,
): Runtime {
  const hooks =
    claims === undefined || logger === undefined
      ? {}
      : takeoverHooks({ claims, runsDir: config.runsDir, logger });
  return createRuntime({ ...runtime, ...hooks, maxActiveRuns: config.workerConcurrency });
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
    // Adding jobs fails fast while Redis is away (a 503), rather than waiting for it.
    queue: openRedis({ url, logger, name: 'queue' }),
    changes: openRedis({ url, logger, name: 'claims-changes', blocking: true }),
    worker: openRedis({ url, logger, name: 'worker', blocking: true }),
    cancels: openRedis({ url, logger, name: 'claims-cancel', blocking: true }),
  };
  const keys = createScaleKeys(prefix);
  const claims = createRunClaims(connections.commands, keys);

  let workerRuntime: Runtime | undefined;
  let worker: RunWorker | undefined;
  if (role !== 'api') {
    workerRuntime =
      options.workerRuntime ?? createWorkerRuntime(config, options.runtime, claims, logger);
    worker = createRunWorker({
      runtime: workerRuntime,
      claims,
      connection: connections.worker,
      subscriber: connections.cancels,
      prefix,
      concurrency: config.workerConcurrency,
      lockMs: config.workerLockMs,
      logger,
      resume: config.resume,
      lastSeq: async (runId) => {
        const [entry] = await connections.commands.xrevrange(
          keys.runEvents(runId),
          '+',
          '-',
          'COUNT',
          1,
        );
        return entry === undefined ? undefined : decodeStreamEntry(entry[0], entry[1])?.event.seq;
      },
    });
  }
  const stopSharing =
    workerRuntime === undefined
      ? undefined
      : shareApprovals({
          runtime: workerRuntime,
          redis: connections.commands,
          subscriber: connections.cancels,
          keys,
          lockMs: config.workerLockMs,
          logger,
        });
  let sharedApprovals: { close(): Promise<void> } | undefined;
  const queue = role === 'worker' ? undefined : createRunQueue(connections.queue, prefix);
  queue?.on('error', (error) => logger.warn({ err: error.message }, 'run queue error'));
  const runs =
    queue === undefined
      ? undefined
      : createQueuedRuntime({
          runtime: options.runtime,
          approvals: (provider, showArguments) =>
            (sharedApprovals = createSharedApprovals({
              provider,
              showArguments,
              ...(workerRuntime === undefined ? {} : { local: workerRuntime.approvals }),
              redis: connections.commands,
              subscriber: connections.changes,
              keys,
              logger,
            })),
          queue,
          claims,
          subscriber: connections.changes,
          recentEvents: async (runId) => {
            const entries = await connections.commands.xrevrange(
              keys.runEvents(runId),
              '+',
              '-',
              'COUNT',
              RUN_STREAM_MAXLEN,
            );
            return entries.flatMap(([id, fields]) => {
              const event = decodeStreamEntry(id, fields)?.event;
              return event === undefined ? [] : [event];
            });
          },
          // Until the deployment's event streams carry them, the runs this process executes.
          ...(worker === undefined ? {} : { events: worker }),
        });

  return {
    runs,
    worker,
    workerRuntime,
    executor: worker ?? NOTHING_EXECUTES,
    async checkQueue() {
      const target = queue ?? worker;
      if (target === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the run queue did not answer within ${QUEUE_CHECK_MS} ms`)),
          QUEUE_CHECK_MS,
        );
      });
      try {
        await Promise.race([connections.commands.exists(`${prefix}:${RUN_QUEUE}:meta`), timeout]);
      } catch (error) {
        throw new Error(
          error instanceof Error && error.message.startsWith('the run queue')
            ? error.message
            : 'the run queue (Redis) is unreachable',
          { cause: error },
        );
      } finally {
        clearTimeout(timer);
      }
    },
    async close(graceMs, exiting = false) {
      await runs?.shutdown({ graceMs, exiting });
      await sharedApprovals?.close();
      await worker?.close(graceMs, exiting);
      await stopSharing?.();
      if (queue !== undefined) await closeWithin(connections.queue, queue.close());
      for (const connection of Object.values(connections)) await closeConnection(connection);
    },
  };
}
