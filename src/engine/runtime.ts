/**
 * `createRuntime`: the embedding API's implementation. One XState system per runtime (a root
 * actor whose children are the run actors), a registry of active runs, event fan-out and
 * run-file persistence through each run's observers.
 */
import { mkdir } from 'node:fs/promises';
import { createActor, type AnyActorRef } from 'xstate';
import { createAgentSet, type AgentLookup } from '../agents/agent-set.js';
import { createToolKit, type ToolKit } from '../tools/index.js';
import { createAgentCatalogueLoader, findAgent, type AgentInfo } from '../agents/catalogue.js';
import { customAgentNames } from '../agents/custom-agents.js';
import type { Agent } from '../agents/types.js';
import { shippedAgentCatalogue } from '../config/package-info.js';
import { processTurnSlicer } from './turn-slicer.js';
import {
  AdapterUnavailableError,
  AppError,
  ConflictError,
  ERROR_CODES,
  RunsBudgetSpentError,
  TooManyActiveRunsError,
  ValidationError,
  errorMessage,
} from '../errors.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import { createNoLlmClient } from '../llm/no-llm.js';
import type { LlmClient } from '../llm/types.js';
import { createUnconfiguredLlmClient } from '../llm/unconfigured.js';
import { startOrphanWatch, type OrphanWatch } from '../store/orphan-watch.js';
import { acquireOwnerLease, type OwnerLease } from '../store/owner.js';
import { createRunJournal, type RunJournal } from '../store/run-journal.js';
import { createRunWriter, type RunWriter } from '../store/run-writer.js';
import { createIsoTime } from '../store/run-record.js';
import {
  emptyRecoveryReport,
  recoverRunsDir,
  type RecoveryReport,
} from '../store/startup-recovery.js';
import { WriteThread, type FileWriter } from '../store/write-thread.js';
import { createWorkflowRegistry, resolveRunInputs } from '../workflow/index.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import type { EngineClock, EngineInput, EngineLogic } from '../../machines/engine-contract.js';
import type { EngineAdapter } from './adapter.js';
import { createGraphAdapter } from './adapters/graph.js';
import { agentLoopLimits } from '../agents/agent-loop.js';
import { nativeAdapter } from './adapters/native.js';
import { runMachine } from '../../machines/run.machine.js';
import { chooseAdapter } from './adapter-choice.js';
import { stableInspection } from './inspection.js';
import { withInternals } from './runtime-internals.js';
import { createRetryDelay } from './retry-policy.js';
import { createRootLogic } from './root-logic.js';
import type { RunObserver } from '../tracing/run-observer.js';
import { createRuntimeTracing } from './runtime-tracing.js';
import { assertRunId, createRunIdGenerator } from './run-id.js';
import { RunHeldBytes, RunsHeldBytes } from './held-bytes.js';
import { RunSession } from './run-session.js';
import { resolveRuntimeOptions } from './runtime-options.js';
import { createRuntimeApprovals } from './runtime-approvals.js';
import { createAttemptRunner } from './step-runner.js';
import { systemClock } from './system-clock.js';
import {
  type AdapterName,
  type RunHandle,
  type RunRequest,
  type Runtime,
  type RuntimeOptions,
  type ValidationResult,
  type WorkflowSource,
} from './types.js';
import { CompiledCache, loadWorkflowSource } from './workflow-source.js';

/** The profile lookup of runs without an agent catalogue (no LLM steps). */
const noProfile = (): undefined => undefined;

/** Reason given to runs still active when `shutdown` gives up waiting. */
export const SHUTDOWN_REASON = 'runtime shutting down';

/**
 * The least time the end records of the runs cancelled at the grace get to be written (ms): a
 * grace spent waiting for runs would otherwise leave every cancelled run unwritten. At the
 * measured ~530 writes/s, about 500 records; the rest are left to the next start.
 */
const SHUTDOWN_DRAIN_FLOOR_MS = 1000;

/** Seconds a refused run is told to wait (Retry-After) while run files cannot be written. */
const WRITE_RETRY_AFTER_SECONDS = 5;

/**
 * Seconds a run refused at `maxActiveRuns` is told to wait (Retry-After). When a slot frees
 * is unknown (runs last from milliseconds to hours); 5 s keeps a polling client cheap.
 */
const ACTIVE_RUNS_RETRY_AFTER_SECONDS = 5;

/** Seconds a run refused at `maxRunsHeldBytes` is told to wait (Retry-After), as above. */
const HELD_BYTES_RETRY_AFTER_SECONDS = 5;

function runtimeClosed(): AppError {
  return new AppError(ERROR_CODES.RUNTIME_CLOSED, 'shutting down', {
    status: 503,
    expose: true,
    headers: { 'Retry-After': '5', Connection: 'close' },
    // A refusal while shutting down is expected (the shutdown gate answers most of them).
    logLevel: 'info',
  });
}

/**
 * Creates a runtime: runs workflows as XState actors, streams their events, writes run files.
 * When `persist` is on, it takes an owner lease on the runs directory and scans it once in the
 * background: run files left `running` by processes that are gone are marked failed
 * (`interrupted`), with the steps their journals recorded (see {@link Runtime.recovery}).
 */
export function createRuntime(options: RuntimeOptions = {}): Runtime {
  const resolved = resolveRuntimeOptions(options);
  const log = resolved.logger;
  const clock: EngineClock = options.clock ?? systemClock;
  const adapters: Partial<Record<AdapterName, EngineAdapter>> = {
    native: nativeAdapter,
    graph: createGraphAdapter(),
  };
  const registry = createWorkflowRegistry({
    dir: resolved.workflowsDir,
    readOnlyReason: options.workflowsReadOnlyReason,
    customAgents: customAgentNames(options.agents),
    limits: resolved.limits,
  });
  const compiled = new CompiledCache();
  // With a tracer provider, runs, step attempts, model and tool calls get spans; without one
  // none of this exists and the per-step path has nothing to check but an absent observer.
  const tracing =
    options.tracerProvider === undefined
      ? undefined
      : createRuntimeTracing(options.tracerProvider, options.traceSensitive ?? false);
  const untracedLlm: LlmClient = resolved.noLlm
    ? createNoLlmClient()
    : (options.llm ?? createUnconfiguredLlmClient());
  const llm = tracing === undefined ? untracedLlm : tracing.models(untracedLlm);
  const extraAgents: Readonly<Record<string, Agent>> = options.agents ?? {};
  // Made on the first tool call: opening the memory file is I/O a tool-less runtime never needs.
  let toolkit: Promise<ToolKit> | undefined;
  // Every approval becomes an event of its run (the run may have ended: then it is dropped).
  const gate = createRuntimeApprovals(options.tools, (runId, event) =>
    active.get(runId)?.approval(event),
  );
  const tools = (): Promise<ToolKit> =>
    (toolkit ??=
      tracing === undefined
        ? createToolKit(gate.tools)
        : createToolKit(gate.tools).then(tracing.tools));
  const loopLimits = agentLoopLimits(gate.tools);
  const retryDelayMs = createRetryDelay({ baseMs: resolved.retryBaseMs });
  const sharedAgentSets = new WeakMap<CompiledWorkflow, AgentLookup>();
  const llmWorkflows = new WeakMap<CompiledWorkflow, boolean>();
  const loadCatalogue = createAgentCatalogueLoader({
    files: [shippedAgentCatalogue()],
    dirs: resolved.externalAgentsDir === undefined ? [] : [resolved.externalAgentsDir],
    limits: resolved.limits,
  });
  const slicer = processTurnSlicer();
  const newRunId = createRunIdGenerator();
  // The run records' time formatter and its cache, this runtime's own.
  const isoTime = createIsoTime();
  const active = new Map<string, RunSession>();
  // What the active runs hold (held-bytes.ts): each session gives its bytes back when released.
  const held = new RunsHeldBytes(resolved.maxRunsHeldBytes, resolved.limits.maxRunBytes);
  const reserved = new Set<string>();
  /** Launches between their checks and their session (loading the workflow, the inputs). */
  let launching = 0;
  const eventListeners = new Set<(event: WorkflowEvent) => void>();
  const recordListeners = new Set<(record: RunRecord, filename: string) => void>();
  const idleWaiters = new Set<() => void>();
  let closed = false;

  // The run machine given each engine logic (one for native, one per compiled workflow for graph):
  // `.provide` rebuilds the machine's state-node tree (~185 µs, ~13 KB), so once per logic, not
  // per run. Weak: a workflow's entry goes with its compiled workflow.
  const runMachines = new WeakMap<EngineLogic, typeof runMachine>();
  function runMachineFor(engine: EngineLogic): typeof runMachine {
    let machine = runMachines.get(engine);
    if (machine === undefined) {
      machine = runMachine.provide({ actors: { engine } });
      runMachines.set(engine, machine);
    }
    return machine;
  }
  const root: AnyActorRef = createActor(createRootLogic(), {
    clock,
    ...(resolved.inspect === undefined ? {} : { inspect: stableInspection(resolved.inspect) }),
  });
  root.subscribe({
    error: (error: unknown) => log.error({ err: errorMessage(error) }, 'runtime actor failed'),
  });
  root.start();

  // This runtime's write thread: a worker started on the first write (run files, journals,
  // recovery repairs) and ended by `shutdown`.
  const writeThread = resolved.persist ? new WriteThread() : undefined;
  const writeFile: FileWriter | undefined =
    options.writeFile ??
    (writeThread === undefined ? undefined : (path, data) => writeThread.write(path, data));
  const writer: RunWriter | undefined =
    resolved.persist && writeFile !== undefined
      ? createRunWriter({
          runsDir: resolved.runsDir,
          writeFile,
          concurrency: resolved.writeConcurrency,
          retryBaseMs: resolved.writeRetryBaseMs,
          retryMaxMs: resolved.writeRetryMaxMs,
          clock,
          logger: log,
        })
      : undefined;
  // Its worker's deaths are reported when run files go through it.
  const offWorkerDeath =
    writeThread !== undefined && options.writeFile === undefined
      ? writeThread.onDeath((death) =>
          log.error(
            { exitCode: death.exitCode, code: death.code, consecutive: death.consecutive },
            death.restarting
              ? 'run-file write worker died; its writes are retried on a new worker'
              : 'run-file write worker keeps dying; writing from the main thread from now on',
          ),
        )
      : undefined;

  const journal: RunJournal | undefined =
    writeThread !== undefined
      ? createRunJournal({
          runsDir: resolved.runsDir,
          append: (path, data) => writeThread.append(path, data),
          commitMs: resolved.journalCommitMs,
          maxLineBytes: resolved.limits.maxStepIoBytes,
          maxFileBytes: resolved.limits.maxRunRecordBytes,
          clock,
          logger: log,
        })
      : undefined;

  // The owner lease comes first: a run's start record names its owner, so that no other
  // process's recovery takes the run for one of a dead process.
  const lease: Promise<OwnerLease | undefined> = resolved.persist
    ? mkdir(resolved.runsDir, { recursive: true })
        .then(() =>
          acquireOwnerLease({
            runsDir: resolved.runsDir,
            logger: log,
            leaseMs: resolved.ownerLeaseMs,
          }),
        )
        .catch((error: unknown) => {
          log.error(
            { err: errorMessage(error) },
            'cannot write the owner file in the runs directory; runs are written without an owner',
          );
          return undefined;
        })
    : Promise.resolve(undefined);
  const recovery: Promise<RecoveryReport> = resolved.persist
    ? lease.then(recover)
    : Promise.resolve(emptyRecoveryReport());
  // After the start-up scan, owners that die while this runtime runs are noticed within a lease.
  let watch: OrphanWatch | undefined;
  const watching: Promise<void> = recovery.then(async () => {
    const owner = await lease;
    if (owner === undefined || closed) return;
    watch = startOrphanWatch({
      runsDir: resolved.runsDir,
      self: owner.id,
      everyMs: Math.max(1, Math.floor(resolved.ownerLeaseMs / 3)),
      recover: (gone) => recoverGone(owner, gone),
      logger: log,
    });
  });

  /** The orphan watch's recovery of the runs of owners found gone (see orphan-watch.ts). */
  async function recoverGone(owner: OwnerLease, gone: ReadonlySet<string>): Promise<void> {
    const report = await recoverRunsDir({
      runsDir: resolved.runsDir,
      self: owner.id,
      now: clock.now(),
      only: gone,
      maxRecordBytes: resolved.limits.maxRunRecordBytes,
      logger: log,
      // The history index learns of them as of any record written.
      onRecovered: recorded,
      ...(writeFile !== undefined ? { writeFile } : {}),
    });
    const { recovered, journalsFolded, ownersRemoved, tempFilesRemoved } = report;
    log.warn(
      {
        owners: [...gone],
        recovered: recovered.length,
        journalsFolded,
        ownersRemoved,
        tempFilesRemoved,
        files: recovered.slice(0, 100),
      },
      'owner of runs gone; its runs marked interrupted',
    );
  }

  /** The one start-up scan of this runtime (see Runtime.recovery); logs its result once. */
  async function recover(owner: OwnerLease | undefined): Promise<RecoveryReport> {
    const started = clock.now();
    try {
      const report = await recoverRunsDir({
        runsDir: resolved.runsDir,
        self: owner?.id,
        now: clock.now(),
        maxRecordBytes: resolved.limits.maxRunRecordBytes,
        logger: log,
        ...(writeFile !== undefined ? { writeFile } : {}),
        ...(options.onStartupRecord !== undefined ? { onRecord: options.onStartupRecord } : {}),
      });
      const { recovered, ...counts } = report;
      log.info(
        { ...counts, recovered: recovered.length, ms: clock.now() - started },
        recovered.length > 0
          ? 'runs directory scanned; runs of gone processes marked interrupted'
          : 'runs directory scanned',
      );
      if (recovered.length > 0) log.warn({ files: recovered.slice(0, 100) }, 'interrupted runs');
      return report;
    } catch (error) {
      log.error({ err: errorMessage(error) }, 'could not scan the runs directory');
      return emptyRecoveryReport();
    }
  }

  /**
   * New runs are refused (503) while run files cannot be written or the queue is full: a run
   * admitted then could only end unrecorded.
   */
  function assertWritable(): void {
    if (writer === undefined) return;
    const { failing, pending, lastError } = writer.status();
    if (failing === 0 && pending < resolved.writeQueueMax) return;
    const why =
      failing > 0
        ? `run files cannot be written to the runs directory (${lastError ?? 'EIO'}); ${failing} run record(s) waiting`
        : `the run-file write queue is full (${pending} records waiting)`;
    throw new AppError(ERROR_CODES.RUNS_DIR_UNAVAILABLE, `${why}; try again later`, {
      status: 503,
      expose: true,
      headers: { 'Retry-After': String(WRITE_RETRY_AFTER_SECONDS) },
    });
  }

  function publish(event: WorkflowEvent): void {
    for (const listener of eventListeners) {
      try {
        listener(event);
      } catch (error) {
        log.error({ err: errorMessage(error) }, 'event listener threw');
      }
    }
  }

  function recorded(record: RunRecord, filename: string): void {
    for (const listener of recordListeners) {
      try {
        listener(record, filename);
      } catch (error) {
        log.error({ err: errorMessage(error) }, 'record listener threw');
      }
    }
  }

  function wantsEvents(): boolean {
    return eventListeners.size > 0;
  }

  function wantsRecords(): boolean {
    return recordListeners.size > 0;
  }

  function released(session: RunSession): void {
    session.heldBytes.release();
    active.delete(session.runId);
    reserved.delete(session.runId);
    wakeIfIdle();
  }

  function wakeIfIdle(): void {
    if (active.size === 0 && launching === 0) {
      for (const wake of [...idleWaiters]) wake();
    }
  }

  function pickAdapter(name: string | undefined): EngineAdapter {
    const adapterName = chooseAdapter(name, resolved.defaultAdapter);
    const adapter = adapters[adapterName];
    if (adapter === undefined) {
      throw new AdapterUnavailableError(`adapter '${adapterName}' is not available in this build`);
    }
    return adapter;
  }

  function assertIdle(runId: string): void {
    if (active.has(runId) || reserved.has(runId)) {
      throw new ConflictError(`run '${runId}' is already active`);
    }
  }

  /** Starts a run; `bufferEvents` keeps every event for the handle's `events` (see RunSession). */
  async function launch(request: RunRequest, bufferEvents: boolean): Promise<RunHandle> {
    if (closed) throw runtimeClosed();
    const acceptedAt = tracing === undefined ? 0 : performance.now();
    assertWritable();
    // A given id is checked and reserved before anything slow; a generated one names the
    // workflow (see run-id.ts), so it is made once the workflow is loaded.
    const given = request.runId === undefined ? undefined : assertRunId(request.runId);
    if (given !== undefined) assertIdle(given);
    const adapter = pickAdapter(request.adapter);
    // Runs being started count: from here to launching++ nothing awaits, so concurrent starts
    // cannot overshoot the limit.
    if (active.size + launching >= resolved.maxActiveRuns) {
      throw new TooManyActiveRunsError(resolved.maxActiveRuns, ACTIVE_RUNS_RETRY_AFTER_SECONDS);
    }
    if (!held.admits) {
      throw new RunsBudgetSpentError(held.total, held.max, HELD_BYTES_RETRY_AFTER_SECONDS);
    }
    let runId = given;
    if (runId !== undefined) reserved.add(runId);
    launching++;
    let session: RunSession;
    let observer: RunObserver | undefined;
    try {
      // Starts arriving together (one poll phase can hold dozens of POST /api/run) are spread
      // over turns from here on: loading, session and actor creation, the initial record.
      const slot = slicer.slot();
      if (slot !== undefined) await slot;
      const owner = await lease;
      const workflow = await loadWorkflowSource(request.workflow, registry, compiled);
      if (runId === undefined) {
        const generated = newRunId(workflow.name, clock.now());
        assertIdle(generated);
        runId = generated;
        reserved.add(runId);
      }
      const inputs = resolveRunInputs(
        workflow,
        request.input ?? {},
        request.inputLocPrefix ?? ['input'],
      );
      if (closed) throw runtimeClosed();
      // Workflows without LLM steps need no catalogue (and no async hop to not read one).
      const catalogue = hasLlmSteps(workflow) ? await personas() : [];
      observer = tracing?.runs.observe({
        runId,
        workflow,
        adapter: adapter.name,
        acceptedAt,
        parent: request.traceContext,
      });
      session = createSession(
        runId,
        workflow,
        adapter,
        inputs,
        request,
        catalogue,
        bufferEvents,
        owner?.id,
        observer,
      );
      active.set(runId, session);
    } catch (error) {
      // A run refused here (bad inputs, a full runtime) has no span; one that failed while being
      // set up closes the span it had.
      observer?.ended({ status: 'failed', error: errorMessage(error) });
      if (runId !== undefined) reserved.delete(runId);
      throw error;
    } finally {
      launching--;
      wakeIfIdle();
    }
    reserved.delete(runId);
    log.debug({ runId, workflow: request.workflow, adapter: adapter.name }, 'run starting');
    return session.start();
  }

  function createSession(
    runId: string,
    workflow: CompiledWorkflow,
    adapter: EngineAdapter,
    inputs: Record<string, unknown>,
    request: RunRequest,
    catalogue: readonly AgentInfo[],
    bufferEvents: boolean,
    owner: string | undefined,
    observer: RunObserver | undefined,
  ): RunSession {
    const maxAttempts = request.maxAttempts ?? resolved.maxAttempts;
    // Filled just below: the runner's delta sink reaches the session made after it.
    const made: { session?: RunSession } = {};
    const heldBytes = new RunHeldBytes(held, resolved.limits.maxRunBytes);
    const onDelta = hasLlmSteps(workflow)
      ? (step: string, text: string): void => made.session?.tokenDelta(step, text)
      : undefined;
    const engineInput: EngineInput = {
      runId,
      workflow,
      inputs,
      maxConcurrency: resolved.maxConcurrency,
      maxAttempts,
      holdInput: (input) => heldBytes.hold(input),
      runAttempt: createAttemptRunner({
        runId,
        clock,
        agents: agentSet(workflow, catalogue),
        maxOutputBytes: resolved.limits.maxStepIoBytes,
        holdOutput: (output) => heldBytes.hold(output),
        defaultStepTimeoutMs: resolved.stepTimeoutMs,
        ...(onDelta === undefined ? {} : { onDelta }),
      }),
      retryDelayMs,
      clock,
    };
    const session = new RunSession({
      base: {
        runId,
        workflow,
        adapter: adapter.name,
        inputs,
        startTime: clock.now(),
        extra: request.extra ?? {},
        isoTime,
      },
      engineInput,
      heldBytes,
      machine: runMachineFor(adapter.createLogic(workflow)),
      timeoutMs: request.timeoutMs ?? resolved.timeoutMs,
      parent: root,
      persist: resolved.persist,
      writer,
      journal,
      owner,
      maxRunRecordBytes: resolved.limits.maxRunRecordBytes,
      logger: log,
      publish,
      recorded,
      wantsRecords,
      wantsEvents,
      bufferEvents,
      released,
      tokenDeltaIntervalMs: resolved.tokenDeltaIntervalMs,
      observer,
      slicer,
    });
    made.session = session;
    return session;
  }

  /**
   * The agents of a run. Without a catalogue (no LLM steps) the set depends on the workflow
   * only, so it is shared by that workflow's runs.
   */
  function agentSet(workflow: CompiledWorkflow, catalogue: readonly AgentInfo[]): AgentLookup {
    if (catalogue.length > 0) {
      return createAgentSet(workflow, {
        llm,
        profile: (role) => findAgent(catalogue, role),
        extra: extraAgents,
        tools,
        loopLimits,
      });
    }
    let agents = sharedAgentSets.get(workflow);
    if (agents === undefined) {
      agents = createAgentSet(workflow, {
        llm,
        profile: noProfile,
        extra: extraAgents,
        tools,
        loopLimits,
      });
      sharedAgentSets.set(workflow, agents);
    }
    return agents;
  }

  /** Whether a workflow has LLM steps (tier > 0); remembered per compiled workflow. */
  function hasLlmSteps(workflow: CompiledWorkflow): boolean {
    let llmSteps = llmWorkflows.get(workflow);
    if (llmSteps === undefined) {
      llmSteps = workflow.steps.some((step) => step.tier > 0);
      llmWorkflows.set(workflow, llmSteps);
    }
    return llmSteps;
  }

  /**
   * The agent catalogue (personas) for a run with LLM steps, looked up per run so an edited file
   * applies to the next run; files are parsed again only when they change, and runs starting
   * while a lookup is in flight share it (a burst of starts costs one lookup, not one each).
   */
  async function personas(): Promise<readonly AgentInfo[]> {
    try {
      return await loadCatalogue();
    } catch (error) {
      log.debug(
        { err: errorMessage(error) },
        'agent catalogue unavailable; LLM steps run without personas',
      );
      return [];
    }
  }

  function waitIdle(graceMs: number): Promise<boolean> {
    if (active.size === 0 && launching === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = clock.setTimeout(() => {
        idleWaiters.delete(wake);
        resolve(false);
      }, graceMs);
      const wake = (): void => {
        clock.clearTimeout(timer);
        idleWaiters.delete(wake);
        resolve(true);
      };
      idleWaiters.add(wake);
    });
  }

  const runtime: Runtime = {
    options: resolved,
    approvals: gate.approvals,
    start: (request) => launch(request, request.events !== false),
    run(request) {
      // The handle is dropped here (nothing waits on it), so its events need no buffer.
      return launch(request, false).then((handle) => handle.done);
    },
    cancel(runId, reason = 'cancelled') {
      const session = active.get(runId);
      if (session === undefined) return false;
      session.cancel(reason);
      return true;
    },
    isActive: (runId) => active.has(runId),
    activeRuns: () => [...active.keys()],
    async validate(source: WorkflowSource): Promise<ValidationResult> {
      try {
        const workflow = await loadWorkflowSource(source, registry, compiled);
        return {
          valid: true,
          name: workflow.name,
          stepCount: workflow.steps.length,
          errors: [],
          workflow,
        };
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        const doc =
          typeof source === 'object' ? (source as { name?: unknown; steps?: unknown }) : undefined;
        return {
          valid: false,
          name: typeof doc?.name === 'string' ? doc.name : undefined,
          stepCount: Array.isArray(doc?.steps) ? doc.steps.length : 0,
          errors: error.details,
          workflow: undefined,
        };
      }
    },
    listWorkflows: () => registry.list(),
    async getWorkflow(name) {
      return (await registry.get(name)).compiled;
    },
    subscribe(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onRecord(listener) {
      recordListeners.add(listener);
      return () => recordListeners.delete(listener);
    },
    async shutdown({ graceMs = 10_000 } = {}) {
      closed = true;
      const started = clock.now();
      const watchStopped = watching.then(() => watch?.stop());
      // Runs waiting for their end record count as active: the grace covers their writes too.
      const idle = await waitIdle(graceMs);
      // Queued records are still written (bounded concurrency) and failing ones retried until
      // the grace has passed (at least the drain floor, counted from before the cancellations,
      // which take their time too: ~1-2 ms a run on a loaded 2-core machine); then the rest are
      // abandoned: their runs end failed, their files keep the start record naming this owner.
      const drainMs = Math.max(SHUTDOWN_DRAIN_FLOOR_MS, graceMs - (clock.now() - started));
      const drained = writer?.close(drainMs);
      if (!idle) {
        for (const session of active.values()) session.cancel(SHUTDOWN_REASON);
      }
      await Promise.all([...active.values()].map((session) => session.done));
      await drained;
      const unwritten = writer?.abandoned() ?? 0;
      if (unwritten > 0) {
        log.warn(
          { unwritten, graceMs, drainMs },
          'shutdown grace passed: runs left unwritten; their files keep the start record and the next start marks them interrupted',
        );
      }
      await journal?.close();
      // The scans write too: they end before the owner file goes, which stays when runs were
      // left unwritten: once this process is gone, any process's scan recovers them.
      await recovery;
      await watchStopped;
      await (await lease)?.release({ keep: unwritten > 0 });
      offWorkerDeath?.();
      await writeThread?.stop();
      await toolkit?.then((kit) => kit.close()).catch(() => undefined);
      root.stop();
    },
    writes: () => writer?.status() ?? { pending: 0, failing: 0, lastError: undefined },
    unwrittenRecord: (runId) => writer?.unwritten(runId),
    recovery,
  };
  return withInternals(runtime, { workflows: registry, writeThread });
}
