/**
 * `createRuntime`: the embedding API's implementation, and its assembly. One XState system per
 * runtime (a root actor whose children are the run actors); its parts live apart: the run
 * registry (run-registry.ts), the persistence (run-persistence.ts: run files, journals, owner
 * lease, recovery), the agent wiring (agent-wiring.ts). Here: starting runs (each a RunSession,
 * run-session.ts), event and record fan-out, and the shutdown's order.
 */
import { createActor, type AnyActorRef } from 'xstate';
import type { AgentInfo } from '../agents/catalogue.js';
import { customAgentNames } from '../agents/custom-agents.js';
import { processTurnSlicer } from './turn-slicer.js';
import {
  AdapterUnavailableError,
  AppError,
  DependencyError,
  ERROR_CODES,
  RunNotResumableError,
  ValidationError,
  errorMessage,
} from '../errors.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord, StepRecord } from '../generated/run-record.js';
import { createIsoTime } from '../store/run-record.js';
import { writeInterruptedRecord } from '../store/startup-recovery.js';
import { WORKFLOW_HASH_KEY } from '../store/workflow-pins.js';
import { createWorkflowRegistry, resolveRunInputs } from '../workflow/index.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import { calledWorkflow } from '../workflow/kinds/workflow-call.js';
import type {
  EngineClock,
  EngineInput,
  EngineLogic,
  EngineSeed,
} from '../../machines/engine-contract.js';
import type { EngineAdapter } from './adapter.js';
import { createGraphAdapter } from './adapters/graph.js';
import { nativeAdapter } from './adapters/native.js';
import { createRunLogic, type RunLogic } from '../../machines/run.logic.js';
import { chooseAdapter } from './adapter-choice.js';
import { withInternals } from './runtime-internals.js';
import { createRetryDelay } from './retry-policy.js';
import { createRootLogic } from './root-logic.js';
import type { RunObserver } from '../tracing/run-observer.js';
import { createRuntimeTracing } from './runtime-tracing.js';
import { assertRunId, createRunIdGenerator } from './run-id.js';
import { activeRunFacts } from './run-explain.js';
import { createRunResumer, type ResumedLaunch } from './run-resumer.js';
import { RunSession, type ResumedStart } from './run-session.js';
import { createAgentWiring } from './agent-wiring.js';
import { createRunPersistence } from './run-persistence.js';
import { createRerun } from './rerun.js';
import { RunRegistry } from './run-registry.js';
import { stopRuns } from './runtime-shutdown.js';
import { resolveRuntimeOptions } from './runtime-options.js';
import { createRuntimeApprovals } from './runtime-approvals.js';
import { createStepExecutors, dispatchAttempts } from './step-executors.js';
import { childExtra, createChildRuns, resumedChildRunIds, type ChildLaunch } from './child-runs.js';
import { childActorId, STEP_CHILD } from '../../machines/view-events.js';
import { systemClock } from './system-clock.js';
import { createRunBudgets } from './budget/run-budgets.js';
import type { RunBudget } from './budget/budget-limits.js';
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

export { SHUTDOWN_REASON } from './runtime-shutdown.js';

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
/**
 * When a resumed run's human steps first put their questions, from its start record's steps
 * (`metadata.requested_at`, store/resume-plan.ts); undefined for a step without one.
 */
function askedAtOf(steps: readonly StepRecord[]): (step: string) => number | undefined {
  return (step) => {
    const at = steps.find((entry) => entry.step_name === step)?.metadata.requested_at;
    const time = at === undefined ? Number.NaN : Date.parse(at);
    return Number.isFinite(time) ? time : undefined;
  };
}

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
    mcpServers: new Set(options.tools?.mcp?.servers.map((server) => server.name) ?? []),
    limits: resolved.limits,
  });
  const compiled = new CompiledCache();
  // With a tracer provider, runs, step attempts, model and tool calls get spans; without one
  // none of this exists and the per-step path has nothing to check but an absent observer.
  const tracing =
    options.tracerProvider === undefined
      ? undefined
      : createRuntimeTracing(options.tracerProvider, options.traceSensitive ?? false);
  // Every approval becomes an event of its run (the run may have ended: then it is dropped).
  const emitApproval = (runId: string, event: Parameters<RunSession['approval']>[0]): void =>
    runs.get(runId)?.approval(event);
  const budgets = createRunBudgets({
    resolved,
    options: options.budgets,
    clock,
    emit: emitApproval,
  });
  const gate = createRuntimeApprovals(options.tools, emitApproval, budgets.gate);
  const agents = createAgentWiring({
    resolved,
    llm: options.llm,
    agents: options.agents,
    tools: gate.tools,
    tracing,
    wrapLlm: (llm) => budgets.gate.wrap(llm),
  });
  const retryDelayMs = createRetryDelay({ baseMs: resolved.retryBaseMs });
  const slicer = processTurnSlicer();
  const newRunId = createRunIdGenerator();
  // The run records' time formatter and its cache, this runtime's own.
  const isoTime = createIsoTime();
  const runs = new RunRegistry(
    {
      maxActiveRuns: resolved.maxActiveRuns,
      maxRunsHeldBytes: resolved.maxRunsHeldBytes,
      maxRunBytes: resolved.limits.maxRunBytes,
    },
    clock,
  );
  const eventListeners = new Set<(event: WorkflowEvent) => void>();
  const recordListeners = new Set<(record: RunRecord, filename: string) => void>();
  let closed = false;

  // The run logic given each engine logic (one for native, one per compiled workflow for graph),
  // shared by its runs. Weak: a workflow's entry goes with its compiled workflow.
  const runLogics = new WeakMap<EngineLogic, RunLogic>();
  function runLogicFor(engine: EngineLogic): RunLogic {
    let logic = runLogics.get(engine);
    if (logic === undefined) {
      logic = createRunLogic(engine);
      runLogics.set(engine, logic);
    }
    return logic;
  }
  const root: AnyActorRef = createActor(createRootLogic(), {
    clock,
    ...(resolved.inspect === undefined ? {} : { inspect: resolved.inspect }),
  });
  root.subscribe({
    error: (error: unknown) => log.error({ err: errorMessage(error) }, 'runtime actor failed'),
  });
  root.start();

  const persistence = createRunPersistence({
    resolved,
    clock,
    writeFile: options.writeFile,
    onStartupRecord: options.onStartupRecord,
    recorded,
    resumeRuns: (found, reason) => resumer.resumeFound(found, reason),
  });
  const resumer = createRunResumer({
    runsDir: resolved.runsDir,
    clock,
    logger: log,
    maxRecordBytes: resolved.limits.maxRunRecordBytes,
    compile: (document) => loadWorkflowSource(document, registry, compiled, false),
    byName: async (name) => (await registry.get(name)).compiled,
    launch: launchResumed,
    isActive: (runId) => runs.has(runId),
    self: async () => (await persistence.lease)?.id,
    takeOver: options.takeOver,
    async markInterrupted(filename, record, warning) {
      const written = await writeInterruptedRecord({
        runsDir: resolved.runsDir,
        filename,
        record,
        warning,
        now: clock.now(),
        maxRecordBytes: resolved.limits.maxRunRecordBytes,
        writeFile: persistence.writeFile,
      });
      recorded(written, filename);
    },
  });
  const { writer, journal, writeThread, lease, recovery } = persistence;
  /** The lease's outcome once settled (launches then read it without awaiting). */
  let leaseTaken: { owner: Awaited<typeof lease> } | undefined;
  void lease.then(
    (owner) => (leaseTaken = { owner }),
    () => undefined,
  );
  // Children being resumed by their parent's step: launchResumed starts them under it.
  const resumingChildren = new Map<string, ChildLaunch>();
  const childRuns = createChildRuns({
    runsDir: resolved.persist ? resolved.runsDir : undefined,
    logger: log,
    launch: (request, child) => launch(request, false, undefined, child),
    async resume(runId, child) {
      resumingChildren.set(runId, child);
      try {
        return await resumer.resume(runId, 'request');
      } finally {
        resumingChildren.delete(runId);
      }
    },
    active: (runId) => runs.get(runId),
    cancel: (runId, reason) => runs.get(runId)?.cancel(reason),
  });

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

  function pickAdapter(name: string | undefined): EngineAdapter {
    const adapterName = chooseAdapter(name, resolved.defaultAdapter);
    const adapter = adapters[adapterName];
    if (adapter === undefined) {
      throw new AdapterUnavailableError(`adapter '${adapterName}' is not available in this build`);
    }
    return adapter;
  }

  /**
   * Starts a run; `bufferEvents` keeps every event for the handle's `events` (see RunSession);
   * `seed` starts it with steps already finished (see `EngineSeed`); `child`: a sub-workflow
   * step's child run (child-runs.ts), admitted past the active-run cap (its parent holds a slot),
   * on its parent's adapter, its actor the invoked child of the step (a child of the parent's engine actor).
   */
  async function launch(
    request: RunRequest,
    bufferEvents: boolean,
    seed?: EngineSeed,
    child?: ChildLaunch,
  ): Promise<RunHandle> {
    if (closed) throw runtimeClosed();
    const acceptedAt = tracing === undefined ? 0 : performance.now();
    persistence.assertWritable();
    // A given id is checked and reserved before anything slow; a generated one names the
    // workflow (see run-id.ts), so it is made once the workflow is loaded.
    const given = request.runId === undefined ? undefined : assertRunId(request.runId);
    if (given !== undefined) runs.assertIdle(given);
    const adapter = pickAdapter(child === undefined ? request.adapter : child.parent.adapter);
    if (child !== undefined && given !== undefined) runs.admitResumed(given);
    else runs.admit(given);
    let runId = given;
    let session: RunSession | undefined;
    let observer: RunObserver | undefined;
    try {
      // Starts arriving together (one poll phase can hold dozens of POST /api/run) are spread
      // over turns from here on: loading, session and actor creation, the initial record.
      const slot = slicer.slot();
      if (slot !== undefined) await slot;
      // No `await` where nothing is pending (a settled lease, a document compiled before, no
      // workflow pins with persist off): each is a promise and a microtask hop per run, which at
      // 2,000 concurrent no-op runs was measurable (docs/benchmarks.md, "Many runs").
      const owner = leaseTaken === undefined ? await lease : leaseTaken.owner;
      const workflow =
        (typeof request.workflow === 'object'
          ? compiled.byDocument(request.workflow)
          : undefined) ?? (await loadWorkflowSource(request.workflow, registry, compiled));
      if (runId === undefined) {
        const generated = newRunId(workflow.name, clock.now());
        runs.reserve(generated);
        runId = generated;
      }
      const inputs = resolveRunInputs(
        workflow,
        request.input ?? {},
        request.inputLocPrefix ?? ['input'],
      );
      // The workflow's copy is on disk before the start record that names it (workflow-pins.ts).
      const pinned = persistence.pins === undefined ? undefined : await pinWorkflow(workflow);
      if (closed) throw runtimeClosed();
      // Workflows without LLM steps need no catalogue (and no async hop to not read one).
      const catalogue = agents.hasLlmSteps(workflow) ? await agents.personas() : [];
      observer = tracing?.runs.observe({
        runId,
        workflow,
        adapter: adapter.name,
        acceptedAt,
        parent: request.traceContext,
      });
      const linked =
        child === undefined
          ? request.extra
          : { ...request.extra, ...childExtra(child.parent.runId, child.step, child.item) };
      const extra = pinned === undefined ? linked : { ...linked, ...pinned };
      // A child run spends from its parent's budget; its own workflow's `budget:` is not used.
      const budget = child === undefined ? budgets.ofRequest(workflow, request.budget) : undefined;
      session = createSession(runId, workflow, adapter, inputs, request, {
        catalogue,
        bufferEvents,
        owner: owner?.id,
        observer,
        seed,
        startTime: clock.now(),
        extra: budget === undefined ? (extra ?? {}) : { ...extra },
        child,
        budget,
      });
    } catch (error) {
      // A run refused here (bad inputs, a full runtime) has no span; one that failed while being
      // set up closes the span it had.
      observer?.ended({ status: 'failed', error: errorMessage(error) });
      throw error;
    } finally {
      runs.launched(runId, session);
    }
    log.debug({ runId, workflow: request.workflow, adapter: adapter.name }, 'run starting');
    return session.start();
  }

  /** The `extra` entry naming the run's pinned workflow; none with persist off. */
  async function pinWorkflow(
    workflow: CompiledWorkflow,
  ): Promise<Record<string, string> | undefined> {
    let hash: string | undefined;
    try {
      hash = await persistence.pins?.pin(workflow);
    } catch (error) {
      // The run's files cannot be written (its workflow copy is the first): 503 as for its
      // start record, no path in the message.
      const code = (error as NodeJS.ErrnoException).code;
      throw new DependencyError(
        `cannot write the run file in the runs directory${code === undefined ? '' : ` (${code})`}`,
        error,
      );
    }
    return hash === undefined ? undefined : { [WORKFLOW_HASH_KEY]: hash };
  }

  /**
   * Resumes a run from its files (run-resumer.ts): admitted past the active-run cap and the
   * held-bytes budget (it was accepted before), same run id and run file, seeded engine.
   */
  async function launchResumed(run: ResumedLaunch): Promise<RunHandle> {
    if (closed) throw runtimeClosed();
    persistence.assertWritable();
    runs.assertIdle(run.runId);
    const adapter = pickAdapter(run.adapter);
    const child = resumingChildren.get(run.runId);
    runs.admitResumed(run.runId);
    let session: RunSession | undefined;
    let observer: RunObserver | undefined;
    try {
      const owner = await persistence.lease;
      if (closed) throw runtimeClosed();
      const catalogue = agents.hasLlmSteps(run.workflow) ? await agents.personas() : [];
      // Children started before the interruption stay linked (the interrupted record has none).
      const children =
        resolved.persist && run.workflow.steps.some((step) => step.workflowCall !== undefined)
          ? await resumedChildRunIds(
              resolved.runsDir,
              run.runId,
              run.workflow,
              run.steps,
              run.extra.child_run_ids,
            )
          : [];
      const extra = children.length === 0 ? run.extra : { ...run.extra, child_run_ids: children };
      const budget = await budgets.ofResumed(run);
      observer = tracing?.runs.observe({
        runId: run.runId,
        workflow: run.workflow,
        adapter: adapter.name,
        acceptedAt: tracing === undefined ? 0 : performance.now(),
        parent: undefined,
      });
      session = createSession(
        run.runId,
        run.workflow,
        adapter,
        run.inputs,
        {},
        {
          catalogue,
          bufferEvents: true,
          owner: owner?.id,
          observer,
          seed: run.seed,
          startTime: run.startTime,
          extra,
          resumed: { filename: run.filename, steps: run.steps },
          child,
          budget,
        },
      );
    } catch (error) {
      observer?.ended({ status: 'failed', error: errorMessage(error) });
      throw error;
    } finally {
      runs.launched(run.runId, session);
    }
    return session.start();
  }

  function createSession(
    runId: string,
    workflow: CompiledWorkflow,
    adapter: EngineAdapter,
    inputs: Record<string, unknown>,
    request: Pick<RunRequest, 'maxAttempts' | 'timeoutMs'>,
    launch: {
      catalogue: readonly AgentInfo[];
      bufferEvents: boolean;
      owner: string | undefined;
      observer: RunObserver | undefined;
      seed: EngineSeed | undefined;
      /** Epoch ms: now, or a resumed run's original start. */
      startTime: number;
      extra: Record<string, unknown>;
      resumed?: ResumedStart;
      /** A sub-workflow step's child run: its parent and step (child-runs.ts). */
      child?: ChildLaunch | undefined;
      /** The run's budget, and what it had spent (a resumed run). @default none */
      budget?: RunBudget | undefined;
    },
  ): RunSession {
    const { catalogue, bufferEvents, owner, observer, seed, child } = launch;
    const hasCalls = workflow.steps.some((step) => calledWorkflow(step) !== undefined);
    const maxAttempts = request.maxAttempts ?? resolved.maxAttempts;
    // Filled just below: the runner's delta sink reaches the session made after it.
    const made: { session?: RunSession } = {};
    const heldBytes = runs.heldBytes();
    const onDelta = agents.hasLlmSteps(workflow)
      ? (step: string, text: string): void => made.session?.tokenDelta(step, text)
      : undefined;
    const engineInput: EngineInput = {
      runId,
      workflow,
      inputs,
      maxConcurrency: resolved.maxConcurrency,
      maxAttempts,
      holdInput: (input) => heldBytes.hold(input),
      runAttempt: dispatchAttempts(
        createStepExecutors({
          agent: {
            runId,
            clock,
            agents: agents.agentSet(workflow, catalogue),
            maxOutputBytes: resolved.limits.maxStepIoBytes,
            holdOutput: (output) => heldBytes.hold(output),
            defaultStepTimeoutMs: resolved.stepTimeoutMs,
            ...(onDelta === undefined ? {} : { onDelta }),
          },
          map: {
            clock,
            maxAttempts,
            retryDelayMs,
            listener: {
              started: (step, progress) => made.session?.started(step, progress),
              itemEnded: (step, end, progress) => made.session?.itemEnded(step, end, progress),
            },
            finishedItems:
              launch.resumed === undefined
                ? undefined
                : (step) => made.session?.finishedItems(step),
          },
          workflow: hasCalls
            ? {
                clock,
                startChild: (request) => childRuns(made.session!)(request),
                maxOutputBytes: resolved.limits.maxStepIoBytes,
                holdOutput: (output) => heldBytes.hold(output),
              }
            : undefined,
          human: {
            runId,
            workflow: workflow.name,
            inbox: gate.inputs,
            clock,
            emit: (event) => made.session?.approval(event),
            holdOutput: (output) => heldBytes.hold(output),
            askedAt: launch.resumed === undefined ? undefined : askedAtOf(launch.resumed.steps),
          },
        }),
      ),
      retryDelayMs,
      clock,
      seed,
    };
    const session = new RunSession({
      base: {
        runId,
        workflow,
        adapter: adapter.name,
        inputs,
        startTime: launch.startTime,
        // Its own copy when child run ids will be added to it (RunSession.linkChild).
        extra: hasCalls ? { ...launch.extra } : launch.extra,
        isoTime,
      },
      engineInput,
      heldBytes,
      logic: runLogicFor(adapter.createLogic(workflow)),
      timeoutMs: request.timeoutMs ?? resolved.timeoutMs,
      // A child run's actor is the invoked child of its step's running state: the parent's engine
      // actor's child, with the invoke's id (docs/engine.md, "Kinds in the machine").
      parent: child === undefined ? root : child.parent.engineActor,
      // A map item's child is one of many of its step: its own id, not drawn as the step's invoke.
      ...(child === undefined
        ? {}
        : {
            actorId:
              child.item === undefined
                ? childActorId(child.step)
                : `${childActorId(child.step)}#${child.item}`,
          }),
      persist: resolved.persist,
      writer,
      journal,
      toolCalls: agents.toolCalls,
      owner,
      endFence: options.endFence,
      maxRunRecordBytes: resolved.limits.maxRunRecordBytes,
      logger: log,
      publish,
      recorded,
      wantsRecords,
      wantsEvents,
      bufferEvents,
      released: (session) => {
        budgets.ended(session.runId);
        runs.release(session);
      },
      tokenDeltaIntervalMs: resolved.tokenDeltaIntervalMs,
      observer,
      slicer,
      resumed: launch.resumed,
      // A map item's child keeps its events to its own stream: the parent's has the item frames.
      forward:
        child === undefined || child.item !== undefined
          ? undefined
          : (event) => child.parent.forwardChild(child.step, runId, event),
    });
    made.session = session;
    // The parent's engine lists it among its children while the step runs (view-events.ts).
    if (child?.index !== undefined)
      child.parent.engineActor.send({ type: STEP_CHILD, index: child.index, child: session.actor });
    if (child !== undefined) budgets.join(runId, child, launch.resumed?.steps);
    else if (launch.budget !== undefined) {
      budgets.open(runId, workflow.name, launch.budget, session.extra, launch.resumed?.steps);
    }
    return session;
  }

  // Runs still active when a shutdown's grace ends are left to the next start rather than
  // cancelled: they need their journals (persist on, the runtime's own write thread).
  const leavesRunsToNextStart = resolved.resume !== 'off' && persistence.journal !== undefined;

  const runtime: Runtime = {
    options: resolved,
    approvals: gate.approvals,
    start: (request) => launch(request, request.events !== false),
    rerun: createRerun({
      runsDir: resolved.runsDir,
      isActive: (runId) => runs.has(runId),
      loadWorkflow: (name) => loadWorkflowSource(name, registry, compiled),
      launch: (request, seed) => launch(request, request.events !== false, seed),
    }),
    run(request) {
      // The handle is dropped here (nothing waits on it), so its events need no buffer.
      return launch(request, false).then((handle) => handle.done);
    },
    cancel(runId, reason = 'cancelled') {
      const session = runs.get(runId);
      if (session === undefined) return false;
      session.cancel(reason);
      return true;
    },
    isActive: (runId) => runs.has(runId),
    activeRuns: () => runs.ids(),
    explain(runId) {
      const session = runs.get(runId);
      if (session === undefined) return undefined;
      const items = session.mapItems;
      return { ...activeRunFacts(session.actor), ...(items === undefined ? {} : { items }) };
    },
    async resume(runId) {
      if (closed) throw runtimeClosed();
      if (!resolved.persist) {
        throw new RunNotResumableError('runs are not persisted: there is nothing to resume', 409);
      }
      await persistence.recovery;
      return resumer.resume(runId);
    },
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
    async shutdown({ graceMs = 10_000, exiting = false } = {}) {
      closed = true;
      await stopRuns({ runs, persistence, clock, log, leavesRunsToNextStart }, graceMs, exiting);
      await agents.close();
      root.stop();
    },
    writes: () => writer?.status() ?? { pending: 0, failing: 0, lastError: undefined },
    unwrittenRecord: (runId) => writer?.unwritten(runId),
    recovery,
  };
  return withInternals(runtime, {
    workflows: registry,
    writeThread,
    startSeeded: (request, seed) => launch(request, request.events !== false, seed),
    resumeRecord: async (filename, record, reason) => {
      if (closed) throw runtimeClosed();
      await persistence.recovery;
      return resumer.resumeRecord(filename, record, reason);
    },
    ownerId: async () => (await persistence.lease)?.id,
    tools: () => agents.tools(),
  });
}
