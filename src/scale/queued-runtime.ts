/**
 * The runtime of an api instance with `REDIS_URL`: the HTTP layer's {@link RunService}, whose
 * runs execute on workers. `start` checks a run exactly as a runtime does before it runs one
 * (run id, adapter, the workflow in the shared workflows directory, its inputs), claims the run
 * id across the deployment (409 when it is active anywhere), queues the run and answers: the
 * run's events and records come from the workers (through Redis, see the event modules).
 * `cancel` reaches the worker running the run wherever it is; active runs are known from the
 * claims, mirrored here from their change notices so `isActive`/`activeRuns` answer at once.
 */
import { join } from 'node:path';
import { readdir } from 'node:fs/promises';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { customAgentNames } from '../agents/custom-agents.js';
import { chooseAdapter } from '../engine/adapter-choice.js';
import { assertRunId, createRunIdGenerator } from '../engine/run-id.js';
import { createRuntimeApprovals } from '../engine/runtime-approvals.js';
import { resolveRuntimeOptions } from '../engine/runtime-options.js';
import { prepareFork } from '../engine/rerun.js';
import type {
  RerunRequest,
  RunPlace,
  RunRequest,
  RunService,
  RuntimeOptions,
  StartedRun,
  WorkflowEvent,
} from '../engine/types.js';
import {
  CompiledCache,
  isWorkflowReference,
  loadWorkflowSource,
} from '../engine/workflow-source.js';
import {
  AppError,
  ConflictError,
  ERROR_CODES,
  NotFoundError,
  RunNotResumableError,
  errorMessage,
} from '../errors.js';
import { RUN_ID } from '../store/history.js';
import { readInterruptedRecord } from '../store/resume-plan.js';
import type { RunRecord } from '../generated/run-record.js';
import { emptyRecoveryReport } from '../store/startup-recovery.js';
import { injectTraceContext } from '../tracing/index.js';
import { readRunFile } from '../store/run-files.js';
import { failedWithoutSteps } from '../store/not-started-record.js';
import { createWorkflowRegistry, resolveRunInputs } from '../workflow/index.js';
import { parseClaimChange, type RunClaims } from './run-claims.js';
import type { RunJob } from './run-queue.js';
import { runningMapItems } from './map-items.js';
import { createActiveMirror } from './active-mirror.js';
import { persistently } from './persistently.js';
import { unsubscribeQuietly } from './quiet-close.js';

export interface QueuedRuntimeOptions {
  /** As for the workers' runtime: workflows dir, runs dir, limits, adapter, custom agent names. */
  runtime: RuntimeOptions;
  queue: Queue<RunJob>;
  claims: RunClaims;
  /** A connection for the changes channel (it enters subscriber mode). */
  subscriber: Redis;
  /**
   * Where the runs' events and records come from (the event streams); the facade itself
   * executes nothing. @default none: no events, no records
   */
  events?: Pick<RunService, 'subscribe' | 'onRecord'>;
  /**
   * The deployment's approvals (shared-approvals.ts), given the configured provider's name.
   * @default none waiting here
   */
  approvals?: (provider: string, showArguments: boolean) => RunService['approvals'];
  /**
   * The run's latest events, newest first (its Redis stream): a run on a worker is explained
   * with its running map steps' item counts. @default none: no counts
   */
  recentEvents?: (runId: string) => Promise<WorkflowEvent[]>;
}

/** Seconds a run refused while the runtime shuts down is told to wait. */
const CLOSED_RETRY_AFTER = '5';

export function createQueuedRuntime(options: QueuedRuntimeOptions): RunService {
  const resolved = resolveRuntimeOptions(options.runtime);
  const { queue, claims, subscriber } = options;
  const log = resolved.logger;
  const registry = createWorkflowRegistry({
    dir: resolved.workflowsDir,
    customAgents: customAgentNames(options.runtime.agents),
    limits: resolved.limits,
  });
  const compiled = new CompiledCache();
  const newRunId = createRunIdGenerator();
  const local = createRuntimeApprovals(options.runtime.tools, () => undefined).approvals;
  const approvals = options.approvals?.(local.provider, local.showArguments) ?? local;
  const ended = new Map<string, Set<(filename: string | undefined) => void>>();
  const mirror = createActiveMirror({
    load: () => claims.active(),
    logger: log,
    onGone: (runId) => void findAndSettle(runId),
  });
  let closed = false;
  /** Ends the background releases of refused runs' claims at shutdown. */
  const stopping = new AbortController();

  /** Releases a refused run's claim in the background, retrying while Redis does not answer. */
  function unclaimLater(runId: string): void {
    void persistently(
      () => claims.releaseQueued(runId),
      stopping.signal,
      (error) => {
        log.warn(
          { runId, err: errorMessage(error) },
          'refused run claim not released yet; retrying',
        );
      },
    );
  }

  const onMessage = (channel: string, message: string): void => {
    if (channel !== claims.changesChannel) return;
    const change = parseClaimChange(message);
    if (change === undefined) return;
    mirror.apply(change.runId, change.active);
    if (!change.active) settle(change.runId, change.filename);
  };
  subscriber.on('message', onMessage);
  // A reconnect may have lost notices: the mirror is loaded again from the claims.
  const onReady = (): void => mirror.resync();
  subscriber.on('ready', onReady);
  const subscribed = subscriber
    .subscribe(claims.changesChannel)
    .then(() => mirror.resync())
    .catch((error: unknown) =>
      log.error({ err: errorMessage(error) }, 'cannot subscribe to run changes'),
    );

  function settle(runId: string, filename: string | undefined): void {
    const waiters = ended.get(runId);
    if (waiters === undefined) return;
    ended.delete(runId);
    for (const wake of waiters) wake(filename);
  }

  /** A waiter's run ended while notices were lost: its file is found in the runs directory. */
  async function findAndSettle(runId: string): Promise<void> {
    if (!ended.has(runId)) return;
    const suffix = `_${runId}.json`;
    const names = await readdir(resolved.runsDir).catch(() => [] as string[]);
    settle(
      runId,
      names.find((name) => name.endsWith(suffix)),
    );
  }

  /** The record of an ended run, read from the shared runs directory once its claim is gone. */
  function whenDone(runId: string, workflow: string): Promise<RunRecord> {
    return new Promise<string | undefined>((resolve) => {
      let waiters = ended.get(runId);
      if (waiters === undefined) ended.set(runId, (waiters = new Set()));
      waiters.add(resolve);
      // Ended before the waiter was added: the mirror no longer has it.
      if (!mirror.has(runId)) void findAndSettle(runId);
    }).then(async (filename) => {
      if (filename !== undefined) {
        try {
          return await readRunFile(join(resolved.runsDir, filename));
        } catch (error) {
          return lostRecord(runId, workflow, `run file unreadable: ${errorMessage(error)}`);
        }
      }
      return lostRecord(runId, workflow, 'the run ended without a run file');
    });
  }

  /**
   * Claims the job's run id across the deployment and queues the job; `refused` is what an id
   * active anywhere is told (409). Redis not answering is a 503 and the claim is undone, now or
   * once Redis answers, unless a worker took a job whose adding only lost its reply (that run
   * then runs, its only run).
   */
  async function enqueue(
    job: RunJob,
    jobId: string,
    workflow: string,
    refused: () => Error,
  ): Promise<StartedRun> {
    const { runId } = job;
    let claimed: boolean;
    try {
      claimed = await claims.claim(runId);
    } catch (error) {
      // The claim may have been made with its reply lost: undone once Redis answers.
      unclaimLater(runId);
      throw queueUnavailable(error);
    }
    if (!claimed) throw refused();
    mirror.apply(runId, true);
    try {
      await queue.add(runId, job, { jobId });
    } catch (error) {
      unclaimLater(runId);
      mirror.apply(runId, false);
      throw queueUnavailable(error);
    }
    let done: Promise<RunRecord> | undefined;
    return {
      runId,
      // Made when asked for (evaluated runs, batches): most callers never wait for the end.
      get done() {
        return (done ??= whenDone(runId, workflow));
      },
    };
  }

  /** A new run's job (start, rerun): the trace context travels as W3C strings. */
  function newRunJob(request: RunRequest, runId: string, workflow: string): RunJob {
    // A Context object does not survive JSON; the input's loc is the api instance's business.
    const { inputLocPrefix: _loc, traceContext, ...rest } = request;
    const trace = traceContext === undefined ? undefined : injectTraceContext(traceContext);
    return {
      runId,
      request: { ...rest, workflow, runId },
      ...(trace === undefined ? {} : { trace }),
    };
  }

  async function start(request: RunRequest): Promise<StartedRun> {
    if (closed) throw shuttingDown();
    const given = request.runId === undefined ? undefined : assertRunId(request.runId);
    const adapter = chooseAdapter(request.adapter, resolved.defaultAdapter);
    if (typeof request.workflow !== 'string' || !isWorkflowReference(request.workflow)) {
      // Workers read workflows from the shared directory: only names and paths travel.
      throw new AppError(
        ERROR_CODES.VALIDATION,
        'runs queued to workers name a workflow of the workflows directory',
        { status: 422 },
      );
    }
    const workflow = await loadWorkflowSource(request.workflow, registry, compiled);
    const runId = given ?? newRunId(workflow.name, Date.now());
    resolveRunInputs(workflow, request.input ?? {}, request.inputLocPrefix ?? ['input']);
    const job = newRunJob({ ...request, adapter }, runId, request.workflow);
    const refused = () => new ConflictError(`run '${runId}' is already active`);
    const started = await enqueue(job, runId, workflow.name, refused);
    log.debug({ runId, workflow: request.workflow, adapter }, 'run queued');
    return started;
  }

  /**
   * POST /api/runs/{run_id}/rerun here: checked as `runtime.rerun` checks it (engine/rerun.ts:
   * 404, 409 while the source is active anywhere or its workflow is gone or lacks the step, 422),
   * the fork's inputs validated, then queued under a new id. The worker reads the source's run
   * file from the shared runs directory and runs the fork seeded (run-worker.ts): the job
   * carries the source's id and the step, not the seed, whose reused outputs may weigh up to a
   * run file's bound and would wait in Redis with the job.
   */
  async function rerun(sourceRunId: string, request: RerunRequest): Promise<StartedRun> {
    if (closed) throw shuttingDown();
    const given = request.runId === undefined ? undefined : assertRunId(request.runId);
    const fork = await prepareFork(
      {
        runsDir: resolved.runsDir,
        isActive: (runId) => mirror.has(runId),
        loadWorkflow: (name) => loadWorkflowSource(name, registry, compiled),
      },
      sourceRunId,
      request,
    );
    const adapter = chooseAdapter(fork.request.adapter, resolved.defaultAdapter);
    const { workflow } = fork;
    const runId = given ?? newRunId(workflow.name, Date.now());
    resolveRunInputs(workflow, fork.request.input, fork.request.inputLocPrefix ?? ['inputs']);
    // The worker's runtime.rerun sets forked_from itself, from the source it reads.
    const { extra: _extra, ...forkRequest } = fork.request;
    const job: RunJob = {
      ...newRunJob({ ...forkRequest, adapter }, runId, fork.request.workflow),
      rerun: {
        source: fork.source.run_id,
        fromStep: request.fromStep,
        ...(request.inputs === undefined ? {} : { inputs: request.inputs }),
      },
    };
    const refused = () => new ConflictError(`run '${runId}' is already active`);
    const started = await enqueue(job, runId, workflow.name, refused);
    log.debug({ runId, source: fork.source.run_id, step: request.fromStep }, 'rerun queued');
    return started;
  }

  /**
   * POST /api/runs/{run_id}/resume here: an interrupted run (AGENTIC_RESUME=manual, or a
   * restart's leftovers) is claimed again and queued as a resume; a worker resumes it from its
   * run file (run-worker.ts). Checked here as the runtime checks it: 404 without a run file, 409
   * when the run ended otherwise or is active anywhere (its claim held).
   */
  async function resume(runId: string): Promise<StartedRun> {
    if (closed) throw shuttingDown();
    if (!RUN_ID.test(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    const suffix = `_${runId}.json`;
    const names = await readdir(resolved.runsDir).catch(() => [] as string[]);
    const filename = names.find((name) => name.endsWith(suffix) && !name.startsWith('.'));
    if (filename === undefined) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    const record = await readInterruptedRecord(resolved.runsDir, runId, filename);
    const job: RunJob = {
      runId,
      request: { runId, workflow: record.workflow_name },
      resume: true,
    };
    // Its first job (the run's id) may still be kept as failed: a resume job of its own.
    const jobId = `${runId}.resume.${Date.now()}`;
    const refused = () =>
      new RunNotResumableError(`run ${runId} is active; only an interrupted run resumes`, 409);
    const started = await enqueue(job, jobId, record.workflow_name, refused);
    log.info({ runId }, 'run resume queued');
    return started;
  }

  const events = options.events;
  // The runs this process executes (role `all`) end here before their claim's release notice
  // comes back through Redis, which an outage delays: known at once, so `isActive` and `done`
  // do not wait for Redis. (A resync before the release lands shows the run active again until
  // its notice.)
  const offLocalEnds = events?.onRecord((record, filename) => {
    if (record.status !== 'success' && record.status !== 'failed') return;
    mirror.apply(record.run_id, false);
    settle(record.run_id, filename);
  });
  return {
    options: resolved,
    approvals,
    start,
    rerun,
    resume,
    async cancel(runId, reason = 'cancelled') {
      return claims.requestCancel(runId, reason);
    },
    isActive: (runId) => mirror.has(runId),
    activeRuns: () => mirror.list(),
    async locate(runId) {
      const place = await locate(queue, claims, runId);
      if (place?.state !== 'running' || options.recentEvents === undefined) return place;
      let events: WorkflowEvent[];
      try {
        events = await options.recentEvents(runId);
      } catch (error) {
        log.warn({ runId, err: errorMessage(error) }, 'run events not read for explain');
        return place;
      }
      const items = runningMapItems(events);
      return items.size === 0 ? place : { ...place, items };
    },
    async getWorkflow(name) {
      return (await registry.get(name)).compiled;
    },
    subscribe: (listener: (event: WorkflowEvent) => void) =>
      events?.subscribe(listener) ?? (() => undefined),
    onRecord: (listener) => events?.onRecord(listener) ?? (() => undefined),
    async shutdown() {
      closed = true;
      stopping.abort();
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      offLocalEnds?.();
      await unsubscribeQuietly(subscriber, claims.changesChannel, subscribed);
      mirror.close();
      for (const runId of [...ended.keys()]) settle(runId, undefined);
    },
    writes: () => ({ pending: 0, failing: 0, lastError: undefined }),
    unwrittenRecord: () => undefined,
    recovery: Promise.resolve(emptyRecoveryReport()),
  };
}

/**
 * Where an active run of the deployment is: taken by a worker (its owner), or waiting in the
 * queue at its place, oldest first (one read of the queue's wait list: O(runs waiting)).
 */
async function locate(
  queue: Queue<RunJob>,
  claims: RunClaims,
  runId: string,
): Promise<RunPlace | undefined> {
  const claim = await claims.get(runId);
  if (claim === undefined) return undefined;
  const job = await queue.getJob(runId);
  const workflow = job?.data.request.workflow ?? null;
  if (claim.state === 'running') return { state: 'running', worker: claim.owner, workflow };
  const waiting = await queue.getRanges(['wait'], 0, -1, true);
  const at = waiting.indexOf(runId);
  if (at === -1 && (await queue.getJobState(runId)) === 'active')
    return { state: 'running', worker: claim.owner, workflow };
  // Not in the wait list (delayed after a failed take): it comes after the runs waiting now.
  const position = at === -1 ? waiting.length + 1 : at + 1;
  return { state: 'queued', position, waiting: Math.max(waiting.length, position), workflow };
}

/** 503 for a run that cannot be queued (Redis unreachable): nothing was started. */
function queueUnavailable(cause: unknown): AppError {
  return new AppError(
    ERROR_CODES.DEPENDENCY_UNAVAILABLE,
    'the run queue (Redis) is unavailable; try again shortly',
    { status: 503, expose: true, headers: { 'Retry-After': CLOSED_RETRY_AFTER }, cause },
  );
}

function shuttingDown(): AppError {
  return new AppError(ERROR_CODES.RUNTIME_CLOSED, 'shutting down', {
    status: 503,
    expose: true,
    headers: { 'Retry-After': CLOSED_RETRY_AFTER, Connection: 'close' },
    logLevel: 'info',
  });
}

/** The record `done` resolves with when the run's file cannot be had: failed, saying why. */
function lostRecord(runId: string, workflow: string, error: string): RunRecord {
  const run = { runId, workflowName: workflow, adapter: 'graph', inputs: {} } as const;
  return failedWithoutSteps(run, error, Date.now(), null);
}
