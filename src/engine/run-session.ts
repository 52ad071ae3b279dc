/**
 * One run inside the runtime: its run actor, the observers that turn the actor's emitted events
 * and snapshots into wire events and run files, and the handle given to the caller. Everything
 * here is dropped when the run ends (the runtime keeps no per-run state after that).
 */
import { createActor, type Actor, type AnyActorRef } from 'xstate';
import { runEngineOf, type RunLogic, type RunResult } from '../../machines/run.logic.js';
import { STEP_ITEMS, type StepItemsEvent } from '../../machines/view-events.js';
import { DependencyError, errorMessage } from '../errors.js';
import {
  RunEventMapper,
  isForwardedEvent,
  type ApprovalEventFields,
} from '../events/event-mapper.js';
import { TokenCoalescer } from '../events/token-coalescer.js';
import type { WorkflowEvent } from '../generated/events.js';
import type {
  FinishedMapItem,
  MapItemsSummary,
  RunRecord,
  StepRecord,
} from '../generated/run-record.js';
import { finishedItems } from '../store/resume-plan.js';
import type { Logger } from '../log.js';
import { boundRunRecord } from '../store/record-bounds.js';
import { runFileName } from '../store/run-files.js';
import type { RunJournal } from '../store/run-journal.js';
import { RecordNotWrittenError, type RunWriter } from '../store/run-writer.js';
import {
  finishedRunRecord,
  startedRunRecord,
  stepRecord,
  successRate,
  type RunRecordBase,
} from '../store/run-record.js';
import type { EngineEvent, EngineInput, StepOutcome } from '../../machines/engine-contract.js';
import { RunEventStream } from './event-stream.js';
import type { RunHeldBytes } from './held-bytes.js';
import type { RunObserver } from '../tracing/run-observer.js';
import type { RunHandle } from './types.js';
import type { TurnSlicer } from './turn-slicer.js';
import { STEP_STATUS, type CompiledStep } from '../workflow/types.js';
import {
  framesItem,
  type MapItemEnd,
  type MapItemListener,
  type MapProgress,
} from './kinds/map.js';

export interface RunSessionOptions {
  base: RunRecordBase;
  /** The engine's input; the session adds itself as its `observer`. */
  engineInput: EngineInput;
  /** What the run holds of its steps' inputs and outputs (released by the runtime at the end). */
  heldBytes: RunHeldBytes;
  /** The run actor's logic, given this run's engine (`createRunLogic(engine)`). */
  logic: RunLogic;
  timeoutMs: number | undefined;
  /**
   * The run actor's parent: the runtime's root actor (one XState system per runtime), or, for a
   * sub-workflow step's child run, its parent run's engine actor.
   */
  parent: AnyActorRef;
  /** The run actor's id. @default `run-<run id>` (a child run: its step's invoke id) */
  actorId?: string | undefined;
  persist: boolean;
  /** The runtime's write queue (present when `persist` is on). */
  writer: RunWriter | undefined;
  /** The runtime's run journals (present when `persist` is on). */
  journal: RunJournal | undefined;
  /** The runtime's MCP tool-call journal: the run's is removed when its end record is written. */
  toolCalls?: { forget(runId: string): Promise<void> } | undefined;
  /** The runtime's owner id, recorded in the start record (see store/owner.ts). */
  owner: string | undefined;
  /**
   * Checked before the end record (RuntimeOptions.endFence): false when another process took the
   * run over meanwhile; the run is then dropped here (no end record, no `workflow_end`).
   */
  endFence?: ((runId: string, owner: string | undefined) => Promise<boolean>) | undefined;
  /** Largest run record; bigger parts are truncated with markers (docs/limits.md). */
  maxRunRecordBytes: number;
  logger: Logger;
  /** Fan-out of every wire event (runtime subscribers). */
  publish: (event: WorkflowEvent) => void;
  /** Called after each run-file write (or, with persist off, where it would have happened). */
  recorded: (record: RunRecord, filename: string) => void;
  /**
   * Whether anyone takes records besides the run file (`onRecord` listeners). With persist off
   * and nobody listening, the initial record is not built at all.
   */
  wantsRecords: () => boolean;
  /** Whether the runtime has event subscribers (`subscribe`). */
  wantsEvents: () => boolean;
  /**
   * Whether the handle's `events` must replay the run (buffer every event). `run()` drops the
   * handle, so it runs without a buffer.
   */
  bufferEvents: boolean;
  /** Called once the run has ended and its end file is written. */
  released: (session: RunSession) => void;
  /** Longest a streamed model chunk waits to go out as a `token_delta`, in ms. */
  tokenDeltaIntervalMs: number;
  /** The runtime's gate spreading run begins over event-loop turns (see turn-slicer.ts). */
  slicer?: TurnSlicer;
  /** Follows the run's engine events and its end (tracing); absent costs one check per event. */
  observer?: RunObserver | undefined;
  /**
   * The run goes on from its run file (a resumed run, see run-resumer.ts): its file keeps its
   * name, its new start record holds these step records (the finished steps, which the engine
   * is seeded with), its old journal is removed once that record is written, and its
   * workflow_start says `resumed: true`. @default a new run
   */
  resumed?: ResumedStart | undefined;
  /**
   * A child run (a sub-workflow step's): each of its events also goes to this function (its
   * parent's {@link RunSession.forwardChild}). Its events are then always built. @default none
   */
  forward?: ((event: WorkflowEvent) => void) | undefined;
}

/** How a resumed run's session starts (see {@link RunSessionOptions.resumed}). */
export interface ResumedStart {
  /** The run file's name (as the earlier process named it). */
  filename: string;
  /** The step records of the new start record, in YAML order. */
  steps: StepRecord[];
}

export class RunSession implements MapItemListener {
  readonly runId: string;
  private fileName: string | undefined;
  readonly actor: Actor<RunLogic>;
  /** The handle's events; undefined when nobody can read them (see `bufferEvents`). */
  readonly stream: RunEventStream | undefined;
  readonly done: Promise<RunRecord>;
  private resolveDone!: (record: RunRecord) => void;
  private readonly outcomes: (StepOutcome | undefined)[];
  private readonly mapper: RunEventMapper;
  private ending = false;
  /** Set by `abandon`: the run's engine events are dropped. */
  private abandoned = false;
  /** Set once workflow_end has gone out, so a failing finish never sends a second one. */
  private endSent = false;
  /** Made on a run's first streamed chunk (most runs have no LLM steps). */
  private deltas: TokenCoalescer | undefined;
  /** The child run ids linked (made by the first child). */
  private childIds: Set<string> | undefined;
  /** The running map steps' live item counts, by step index (made by the first map step). */
  private mapProgress: Map<number, Readonly<MapProgress>> | undefined;

  constructor(private readonly options: RunSessionOptions) {
    const { base } = options;
    this.runId = base.runId;
    this.outcomes = new Array<StepOutcome | undefined>(base.workflow.steps.length);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.stream = options.bufferEvents ? new RunEventStream() : undefined;
    const forward = options.forward;
    // Bound methods rather than per-run arrow functions: fewer closure objects per run.
    this.mapper = new RunEventMapper({
      runId: base.runId,
      workflow: base.workflow,
      adapter: base.adapter,
      clock: options.engineInput.clock,
      isoTime: base.isoTime,
      sink:
        forward !== undefined
          ? (event) => {
              this.publishAndBuffer(event);
              forward(event);
            }
          : this.stream === undefined
            ? options.publish
            : this.publishAndBuffer.bind(this),
      // Without a buffer, events are built only while the runtime has subscribers.
      ...(this.stream === undefined && forward === undefined
        ? { wanted: options.wantsEvents }
        : {}),
    });
    options.engineInput.observer = this.onEngineEvent.bind(this);
    this.actor = createActor(options.logic, {
      parent: options.parent,
      // No `systemId`: nothing looks runs up in the system, and registering one cost a Map and a
      // WeakMap entry per run (the sessions are the runtime's registry, run-registry.ts).
      id: options.actorId ?? `run-${base.runId}`,
      input: { runId: base.runId, timeoutMs: options.timeoutMs, engine: options.engineInput },
    });
    // The session is the actor's observer (`next`, `error`): XState binds those two methods
    // itself, so binding them here too would add two functions per run.
    this.actor.subscribe(this);
  }

  /** The run file's name (computed when first needed: runs without persistence rarely need it). */
  get filename(): string {
    const { base } = this.options;
    return (this.fileName ??=
      this.options.resumed?.filename ??
      runFileName(base.startTime, base.workflow.name, base.runId));
  }

  private publishAndBuffer(event: WorkflowEvent): void {
    this.options.publish(event);
    this.stream?.push(event);
  }

  /** An approval question or answer of one of this run's tool calls. */
  approval(event: ApprovalEventFields): void {
    if (this.ending) return;
    this.mapper.approval(event);
  }

  /**
   * An event of a child run of step `step` (a sub-workflow step): its step-level events go on
   * this run's stream, tagged `parent_step` and `child_run_id` (docs/workflow-format.md).
   */
  forwardChild(step: string, childRunId: string, event: WorkflowEvent): void {
    if (this.ending || !isForwardedEvent(event)) return;
    this.mapper.forwarded(event, step, childRunId);
  }

  /**
   * Links a child run to this run: its id joins `extra.child_run_ids` (the end record has them;
   * each child's `extra.parent_run_id` names this run).
   */
  linkChild(childRunId: string): void {
    // A Set beside the list: a map over a sub-workflow links one child per item (O(1) each).
    const extra = this.options.base.extra;
    const linked = (this.childIds ??= new Set(
      Array.isArray(extra.child_run_ids) ? (extra.child_run_ids as string[]) : [],
    ));
    if (linked.has(childRunId)) return;
    linked.add(childRunId);
    if (Array.isArray(extra.child_run_ids)) (extra.child_run_ids as string[]).push(childRunId);
    else extra.child_run_ids = [childRunId];
  }

  /** A chunk of a step's streamed model output (coalesced into `token_delta` events). */
  tokenDelta(step: string, text: string): void {
    if (this.ending) return;
    this.deltas ??= new TokenCoalescer({
      clock: this.options.engineInput.clock,
      intervalMs: this.options.tokenDeltaIntervalMs,
      emit: (name, delta) => this.mapper.tokenDelta(name, delta),
    });
    this.deltas.push(step, text);
  }

  /**
   * The engine actor of this run (what a sub-workflow step's child run is the invoked child of);
   * the run actor itself before its engine exists.
   */
  get engineActor(): AnyActorRef {
    return runEngineOf(this.actor.getSnapshot()) ?? this.actor;
  }

  /**
   * A map step's attempt began: its live counts (`GET /api/runs/{id}/explain`, and the graph
   * machine's counter: `step.items`).
   */
  started(step: CompiledStep, progress: Readonly<MapProgress>): void {
    (this.mapProgress ??= new Map()).set(step.index, progress);
    this.countItems(step, progress);
  }

  /** Hands the engine actor a map step's counts (the graph machine's `context.items.<step>`). */
  private countItems(step: CompiledStep, progress: Readonly<MapProgress>): void {
    const { total, done, failed, running } = progress;
    const event: StepItemsEvent = {
      type: STEP_ITEMS,
      index: step.index,
      items: { total, done, failed, running },
    };
    runEngineOf(this.actor.getSnapshot())?.send(event);
  }

  /** An item of a map step finished: a `step_complete` frame, for a bounded share of them. */
  itemEnded(step: CompiledStep, end: MapItemEnd, progress: Readonly<MapProgress>): void {
    if (this.ending) return;
    // Durable with the journal's next group commit, so a resume does not run it again.
    this.options.journal?.itemFinished(
      this,
      step.index,
      end.error === null
        ? { index: end.index, attempts: end.attempts, output: end.output ?? null }
        : { index: end.index, attempts: end.attempts, error: end.error },
    );
    if (!framesItem(progress)) return;
    this.countItems(step, progress);
    const item = { index: end.index, status: end.status, attempts: end.attempts };
    this.mapper.mapItem(step.index, end.error === null ? item : { ...item, error: end.error }, {
      total: progress.total,
      done: progress.done,
      failed: progress.failed,
      running: progress.running,
    });
  }

  /** The items of map step `step` a resumed run had finished (its start record lists them). */
  finishedItems(step: CompiledStep): readonly FinishedMapItem[] | undefined {
    const record = this.options.resumed?.steps[step.index];
    return record === undefined ? undefined : finishedItems(record);
  }

  /** The running map steps' item counts, by step name. */
  get mapItems(): ReadonlyMap<string, Readonly<MapProgress>> | undefined {
    if (this.mapProgress === undefined || this.mapProgress.size === 0) return undefined;
    const steps = this.options.base.workflow.steps;
    return new Map(
      [...this.mapProgress].map(([index, progress]) => [steps[index]!.name, progress]),
    );
  }

  private onEngineEvent(event: EngineEvent): void {
    if (this.abandoned) return;
    if (event.type === 'step.finished') {
      this.outcomes[event.index] = event.outcome;
      const progress = this.mapProgress?.get(event.index);
      if (progress !== undefined) {
        this.mapProgress!.delete(event.index);
        // A map step failed by the run's abort ends without its attempt's result: its record
        // still says how far its items got. The outcome is the engine's fresh object for this
        // step (its output's too), not yet read by anyone.
        if (event.outcome.items === undefined) {
          const { total, done, failed } = progress;
          (event.outcome as { items?: MapItemsSummary }).items = {
            total,
            succeeded: done,
            failed,
          };
        }
      }
      // A resumed run's start record already holds the steps it was seeded with.
      if (event.seeded !== true || this.options.resumed === undefined)
        this.options.journal?.stepFinished(this, event.index);
    } else if (event.type === 'step.started') {
      // Every attempt: a resume counts the attempts a step had begun (docs/durable-runs.md).
      this.options.journal?.stepStarted(this, event.index, event.time, event.attempt);
    }
    // A step's streamed text goes out before its next lifecycle event.
    if (this.deltas !== undefined && event.type !== 'step.started') {
      const step = this.options.base.workflow.steps[event.index];
      if (step !== undefined) this.deltas.flush(step.name);
    }
    this.mapper.engineEvent(event);
    this.options.observer?.engineEvent(event);
  }

  /** Whether the run is ending (its end record being written) or was abandoned. */
  get isEnding(): boolean {
    return this.ending;
  }

  /** Whether the run was left where it is at shutdown (see `abandon`). */
  get isAbandoned(): boolean {
    return this.abandoned;
  }

  /** The run file's `extra` (the end record writes it as it is then). */
  get extra(): Record<string, unknown> {
    return this.options.base.extra;
  }

  /** The run's adapter (a sub-workflow step's child runs on its parent's). */
  get adapter(): string {
    return this.options.base.adapter;
  }

  /** When the run started (the journal commits runs older than its commit delay). */
  get startTime(): number {
    return this.options.base.startTime;
  }

  /** What the run holds of its steps' inputs and outputs. */
  get heldBytes(): RunHeldBytes {
    return this.options.heldBytes;
  }

  /** The record of finished step `index` (the journal builds its lines when it commits). */
  stepRecord(index: number): StepRecord {
    const { workflow, isoTime } = this.options.base;
    return stepRecord(workflow.steps[index]!, this.outcomes[index]!, isoTime, this.mapper, index);
  }

  /** Observer of the run actor: a snapshot (the run ends with the `done` one). */
  next(snapshot: { status: string; output?: unknown }): void {
    if (snapshot.status === 'done') this.end(snapshot.output as RunResult);
  }

  /** Observer of the run actor: the actor failed. */
  error(error: unknown): void {
    this.options.logger.error({ runId: this.runId, err: errorMessage(error) }, 'run actor failed');
    this.end({ status: 'failed', error: errorMessage(error), engine: null });
  }

  /**
   * Starts the run actor, writes the initial run file, then (in its slot of the turn slicer)
   * lets the engine begin.
   */
  async start(): Promise<RunHandle> {
    this.actor.start();
    try {
      const { persist, wantsRecords, base } = this.options;
      const { resumed, journal } = this.options;
      if (persist || wantsRecords()) {
        const started = startedRunRecord(base);
        if (resumed !== undefined) started.steps = resumed.steps;
        const record = this.bounded(started);
        if (this.options.owner !== undefined) record.owner = this.options.owner;
        await this.write(record, false);
      }
      // The new start record says all the old journal did (a crash before this line folds the
      // journal into it again, to the same steps).
      if (resumed !== undefined) await journal?.discard(this);
    } catch (error) {
      // The run never began: end its actor quietly (no events, no end file) and report why.
      this.ending = true;
      this.actor.send({ type: 'run.cancel', reason: 'run file not writable' });
      this.options.observer?.ended({ status: 'failed', error: 'run file not writable' });
      this.options.released(this);
      // No path in the message: it reaches clients (503 body).
      const code = error instanceof RecordNotWrittenError ? ` (${error.code})` : '';
      throw new DependencyError(`cannot write the run file in the runs directory${code}`, error);
    }
    // Begins released together (a batch of initial run files written at once) are spread over
    // event-loop turns: each costs its engine, first steps and model calls.
    const slot = this.options.slicer?.slot();
    if (slot !== undefined) await slot;
    // `run.begin` takes a pending run actor to `running` (its logic emits `run.started`); a run
    // cancelled meanwhile has left `pending` and never starts. workflow_start is published here,
    // just before, rather than from an `actor.on('run.started')` listener: that listener costs a
    // Map, a Set and a closure per run (~0.45 KB), and nothing is emitted in between.
    const snapshot = this.actor.getSnapshot() as { status: string; value?: unknown };
    if (snapshot.status === 'active' && snapshot.value === 'pending') {
      this.mapper.workflowStart(this.options.base.inputs, this.options.resumed !== undefined);
    }
    this.actor.send({ type: 'run.begin' });
    return {
      runId: this.runId,
      actor: this.actor,
      events: this.stream ?? RunEventStream.empty(),
      done: this.done,
    };
  }

  cancel(reason: string): void {
    this.actor.send({ type: 'run.cancel', reason });
  }

  /**
   * Leaves the run where it is, without ending it: from here nothing of it reaches events, the
   * journal or run files, and `done` never resolves. For the runs a shutdown could not end in
   * time: their files keep the start record and the next start marks them interrupted. `stop`
   * also cancels the run's actor, ending its timers and calls (~0.2 ms a run).
   */
  abandon(stop: boolean): void {
    this.ending = true;
    this.abandoned = true;
    this.deltas?.close();
    if (stop) this.actor.send({ type: 'run.cancel', reason: 'abandoned at shutdown' });
  }

  private end(result: RunResult): void {
    if (this.ending) return;
    this.ending = true;
    this.finish(result).catch((failure: unknown) => this.failFinish(result, failure));
  }

  /**
   * A fault while ending the run (a bug in building its record or events): the run still ends,
   * as failed and logged, with its one workflow_end, its slot released and `done` resolved.
   * Each step is guarded alone so one more fault cannot leave the run half ended.
   */
  private failFinish(result: RunResult, failure: unknown): void {
    const error = `run end failed: ${errorMessage(failure)}`;
    this.options.logger.error({ runId: this.runId, err: errorMessage(failure) }, 'run end failed');
    const { base, engineInput } = this.options;
    let endTime = base.startTime;
    try {
      endTime = engineInput.clock.now();
    } catch {
      // keep the start time: the duration reads 0
    }
    const outcomes = this.completeOutcomes(
      result.engine?.outcomes ?? this.outcomes,
      result,
      endTime,
    );
    const finalOutput = result.engine?.finalOutput ?? null;
    const guarded = (what: string, action: () => void): void => {
      try {
        action();
      } catch (again) {
        this.options.logger.error({ runId: this.runId, err: errorMessage(again) }, what);
      }
    };
    if (!this.endSent) {
      guarded('workflow_end after a failed run end not sent', () =>
        this.sendEnd({
          status: 'failed',
          durationMs: Math.max(0, endTime - base.startTime),
          finalOutput,
          error,
          successRate: successRate(outcomes),
          filename: null,
        }),
      );
    }
    guarded('stream close after a failed run end', () => this.stream?.close());
    guarded('release after a failed run end', () => this.options.released(this));
    const end = { status: 'failed' as const, error, finalOutput, endTime, order: this.mapper };
    let record: RunRecord;
    try {
      record = finishedRunRecord(base, { ...end, outcomes });
    } catch {
      record = finishedRunRecord(base, { ...end, outcomes: [], finalOutput: null });
    }
    this.resolveDone(record);
  }

  private sendEnd(end: Parameters<RunEventMapper['workflowEnd']>[0]): void {
    this.endSent = true;
    // First: a mapper that throws here must not leave the run's span open.
    this.options.observer?.ended({ status: end.status, error: end.error });
    this.mapper.workflowEnd(end);
  }

  private async finish(result: RunResult): Promise<void> {
    const { base, engineInput } = this.options;
    const endTime = engineInput.clock.now();
    this.deltas?.close();
    const outcomes = result.engine?.outcomes ?? this.outcomes;
    const complete = everyOutcome(outcomes, base.workflow.steps.length)
      ? outcomes
      : this.completeOutcomes(outcomes, result, endTime);
    // Steps without their step_end yet (skipped by an abort, or never reported) get it now.
    if (!this.mapper.allEnded) {
      for (let i = 0; i < complete.length; i++) this.mapper.stepFinished(i, complete[i]!);
    }
    const finalOutput = result.engine?.finalOutput ?? null;
    let record = this.bounded(
      finishedRunRecord(base, {
        status: result.status,
        error: result.error,
        outcomes: complete,
        finalOutput,
        endTime,
        order: this.mapper,
      }),
    );
    // workflow_end waits for the durable write (retried until it is on disk): a client never
    // sees an end status whose record could still be lost. Only a record abandoned at shutdown
    // ends without one, and then as failed, naming why.
    let error = result.error;
    let status = result.status;
    const { journal } = this.options;
    journal?.runEnding(this);
    // Awaits only where something is pending (a fence, a writer, a journal): without them each was
    // a promise and a microtask hop per run (docs/benchmarks.md, "Many runs").
    if (this.options.endFence !== undefined && !(await this.fenceHolds())) {
      this.dropTakenOver(record);
      return;
    }
    try {
      if (this.options.writer === undefined) this.tell(record);
      else await this.write(record, true);
      // The end record says everything the journal did.
      if (journal !== undefined) await journal.runEnded(this);
      const toolCalls = this.options.toolCalls;
      if (toolCalls !== undefined) await toolCalls.forget(this.runId);
    } catch (failure) {
      error = errorMessage(failure);
      status = 'failed';
      record = { ...record, status, error };
    }
    // Ends released together (a batch of end files written at once resumes every run in it in
    // one turn) are spread over event-loop turns like begins: each sends its workflow_end to
    // every subscriber and settles the run.
    const slot = this.options.slicer?.slot();
    if (slot !== undefined) await slot;
    this.sendEnd({
      status,
      durationMs: Math.max(0, endTime - base.startTime),
      finalOutput,
      error,
      successRate: successRate(complete),
      filename: this.options.persist ? this.filename : null,
    });
    this.stream?.close();
    this.options.released(this);
    this.resolveDone(record);
  }

  /**
   * Whether this process still holds the run (the end fence, see RuntimeOptions.endFence). A
   * fence that cannot answer (Redis away) holds: only a takeover seen is a loss.
   */
  private async fenceHolds(): Promise<boolean> {
    const { endFence } = this.options;
    if (endFence === undefined) return true;
    try {
      return await endFence(this.runId, this.options.owner);
    } catch (error) {
      this.options.logger.warn(
        { runId: this.runId, err: errorMessage(error) },
        'run end fence not checked; writing the end record',
      );
      return true;
    }
  }

  /**
   * Another process took the run over (this one was paused past its lease): nothing more of it
   * from here, neither its end record (the other process writes that) nor its `workflow_end`;
   * its journal's pending lines were dropped and its journal file is the new owner's.
   */
  private dropTakenOver(record: RunRecord): void {
    this.abandoned = true;
    this.options.logger.warn(
      { runId: this.runId },
      'run taken over by another worker meanwhile; its end record is not written here',
    );
    this.options.observer?.ended({ status: 'failed', error: TAKEN_OVER });
    this.stream?.close();
    this.options.released(this);
    this.resolveDone({ ...record, status: 'failed', error: TAKEN_OVER });
  }

  /**
   * One outcome per step: the engine's, else the one its `step.finished` reported, else a skip
   * with the run's error (a run that ended before its engine reported every step).
   */
  private completeOutcomes(
    outcomes: readonly (StepOutcome | undefined)[],
    result: RunResult,
    endTime: number,
  ): StepOutcome[] {
    return this.options.base.workflow.steps.map((_, i) => {
      const outcome = outcomes[i] ?? this.outcomes[i];
      if (outcome !== undefined) return outcome;
      return {
        status: STEP_STATUS.SKIPPED,
        input: null,
        output: null,
        error: null,
        skipReason: result.error ?? 'not run',
        modelUsed: null,
        tokensUsed: null,
        attempts: 0,
        iterations: 0,
        startTime: null,
        endTime,
      };
    });
  }

  /** The record within the run-record bound; what was truncated is logged as a warning. */
  private bounded(record: RunRecord): RunRecord {
    const { record: within, warnings } = boundRunRecord(record, this.options.maxRunRecordBytes);
    if (warnings.length > 0) {
      this.options.logger.warn({ runId: this.runId, warnings }, 'run record truncated');
    }
    return within;
  }

  /**
   * Writes a record through the runtime's queue: `retry` (the end record) waits until it is on
   * disk, or rejects only when abandoned at shutdown; the first record rejects at once.
   */
  private async write(record: RunRecord, retry: boolean): Promise<void> {
    const { writer } = this.options;
    if (writer !== undefined) await writer.write(this.runId, this.filename, record, retry);
    this.tell(record);
  }

  /** Hands a record written (or, with persist off, where it would have been) to the runtime. */
  private tell(record: RunRecord): void {
    // Without persistence and record listeners there is nobody to tell (and no file name to make).
    if (this.options.persist || this.options.wantsRecords()) {
      this.options.recorded(record, this.filename);
    }
  }
}

/** The error of a run's `done` when another process took the run over (RuntimeOptions.endFence). */
export const TAKEN_OVER = 'taken over by another worker';

/** Whether `outcomes` has an outcome for each of the `count` steps. */
function everyOutcome(
  outcomes: readonly (StepOutcome | undefined)[],
  count: number,
): outcomes is StepOutcome[] {
  if (outcomes.length < count) return false;
  for (let i = 0; i < count; i++) if (outcomes[i] === undefined) return false;
  return true;
}
