import type { ToolsOptions } from '../tools/index.js';
/**
 * The runtime's public contract: what the embedding API (`src/index.ts`) and the HTTP layer
 * use. Implemented by `createRuntime` in `src/engine/runtime.ts`.
 */
import type { Context, TracerProvider } from '@opentelemetry/api';
import type { Inspector } from './inspection.js';
import type { Agent } from '../agents/types.js';
import type { ErrorDetail } from '../errors.js';
import type { WorkflowEvent } from '../generated/events.js';
import type { RunRecord } from '../generated/run-record.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { ContentLimits } from '../workflow/limits.js';
import type { RunWriterStatus, UnwrittenRecord } from '../store/run-writer.js';
import type { RecoveryReport } from '../store/startup-recovery.js';
import type { FileWriter } from '../store/write-thread.js';
import type { CompiledWorkflow, WorkflowDocument } from '../workflow/types.js';
import type { EngineClock } from '../../machines/engine-contract.js';
import type { RunActor } from '../../machines/run.logic.js';
import type { PendingRequest, RequestAnswer, RuntimeApprovals } from './runtime-approvals.js';
import type { ActiveRunFacts } from './run-explain.js';
import type { MapProgress } from './kinds/map.js';

export type { WorkflowEvent } from '../generated/events.js';
export type { RunRecord, StepRecord } from '../generated/run-record.js';

import type { AdapterName } from '../config/adapter-names.js';
import type { WriteSyncMode } from '../config/write-sync-modes.js';
import type { ResumePolicy } from '../config/resume-policy.js';
import type { ResumeReason } from './run-resumer.js';
import type { CallPricer } from './budget/budget-gate.js';
import type { BudgetLimits, RunBudgetRequest } from './budget/budget-limits.js';

export { ADAPTERS, type AdapterName } from '../config/adapter-names.js';

/** Options of {@link createRuntime}; every field has a default. */
export interface RuntimeOptions {
  /** Directory of `*.yaml` workflows. @default `./workflows` when it exists, else the package's `workflows/` */
  workflowsDir?: string;
  /**
   * Why saving workflows into `workflowsDir` is refused (the service's `PUT`/`DELETE
   * /api/workflows/{name}` answer 503 with it), e.g. for the package's shipped directory.
   * @default writable
   */
  workflowsReadOnlyReason?: string;
  /** Directory for run files. @default `./runs` */
  runsDir?: string;
  /** Write run files. @default true */
  persist?: boolean;
  /** Deterministic placeholder LLM responses. @default false */
  noLlm?: boolean;
  /** Steps running at once per run (native adapter). @default 10 */
  maxConcurrency?: number;
  /**
   * Runs active at once (started and not yet ended, end-record write included). `run` and
   * `start` beyond it reject with `TooManyActiveRunsError` (429, `Retry-After`) and start
   * nothing. An idle active run costs about 15 KiB of heap; the limit bounds what runs hold
   * outside the engine (model calls in flight, their sockets, prompts and outputs): see
   * `DEFAULT_MAX_ACTIVE_RUNS`. @default 100
   */
  maxActiveRuns?: number;
  /**
   * Bytes (JSON) of step inputs and outputs all active runs may hold together (each run is also
   * bounded alone by `limits.maxRunBytes`). Once they hold more than this less one run's room,
   * `run` and `start` reject with `RunsBudgetSpentError` (503, `Retry-After`) and start nothing;
   * a step of a running run that would take them over it fails with a clear error.
   * @default a sixteenth of the heap limit (`v8.getHeapStatistics().heap_size_limit / 16`)
   */
  maxRunsHeldBytes?: number;
  /** Run timeout in milliseconds for every run unless the run sets its own. @default none */
  timeoutMs?: number;
  /**
   * Timeout of one attempt of a step that sets no `timeout_seconds`, in milliseconds
   * (`AGENTIC_STEP_TIMEOUT_SECONDS`): a step never runs forever, whatever its agent or provider
   * does. @default 1800000 (30 minutes; see `DEFAULT_STEP_TIMEOUT_MS`)
   */
  stepTimeoutMs?: number;
  /** Adapter used when a run names none. @default 'graph' */
  defaultAdapter?: AdapterName;
  /**
   * An XState inspector for every actor of the runtime (root, run actors, engines): a plain
   * callback, or an inspector observer such as `createWebSocketInspector({ url }).inspect` from
   * `@statelyai/inspect` (docs/engine.md, "Inspection"). Snapshot events carry the state value as it was at
   * that transition. @default off
   */
  inspect?: Inspector;
  /** pino-compatible logger. @default silent */
  logger?: Logger;
  /** Extra agent catalogue directory (`AGENTIC_EXTERNAL_AGENTS_DIR`). @default none */
  externalAgentsDir?: string;
  /** Attempts per step unless the run or the step says otherwise. @default 1 */
  maxAttempts?: number;
  /** Base of the retry backoff (full jitter, doubling per attempt), in ms. @default 500 */
  retryBaseMs?: number;
  /**
   * Agents by the name steps give in `agent:`: any name starting with a letter (`summarize`,
   * `tier0_lookup`, `tier2_reviewer`), taking precedence over the built-in ones. Workflow
   * validation accepts these names; see docs/embedding.md, "Custom agents", for the contract.
   * @default none
   */
  agents?: Readonly<Record<string, Agent>>;
  /** Built-in tools, memory and approval (docs/tools.md). @default no file base dir, no shell commands, in-process memory, approvals denied */
  tools?: ToolsOptions;
  /** The LLM client of `tier1-5` agents; ignored when `noLlm` is set. @default no provider (LLM steps fail, naming what to configure) */
  llm?: LlmClient;
  /** Clock of run timeouts, step timeouts and retry delays (tests pass a simulated one). @default the system clock */
  clock?: EngineClock;
  /**
   * Writes one run file atomically (`(path, data) => Promise<void>`, rejecting with an errno
   * `code`): tests inject failures here. @default the runtime's write worker thread (temp file, fsync, rename)
   */
  writeFile?: FileWriter;
  /** Run-file writes with the file system at once. @default 16 */
  writeConcurrency?: number;
  /**
   * How run records are made durable: `log` (the process log's group commit, one fsync per batch
   * of records; run files are written without an fsync and rebuilt from the log at recovery),
   * `file` (an fsync of each run file), `off` (no fsync: a machine crash may lose records).
   * See docs/durable-run-files.md. @default 'log'
   */
  writeSync?: WriteSyncMode;
  /**
   * Run-file writes queued (in memory, retried) beyond which new runs are refused (503).
   * @default 10000
   */
  writeQueueMax?: number;
  /** First delay before retrying a failed run-file write, in ms; doubles per failure. @default 100 */
  writeRetryBaseMs?: number;
  /** Longest delay between retries of a failed run-file write, in ms. @default 5000 */
  writeRetryMaxMs?: number;
  /**
   * How long step starts and ends wait before they are appended to their run's journal, in ms
   * (group commit: one append and fsync per run per commit; runs shorter than this never write
   * a journal). What a kill can lose of a run's step progress. @default 50
   */
  journalCommitMs?: number;
  /**
   * How long this runtime's owner file (see docs/durable-run-files.md) may go unrefreshed
   * before other processes count it as gone and recover its runs, in ms; refreshed three times
   * per lease. Also how often this runtime looks for gone owners: a third of it.
   * @default 30000
   */
  ownerLeaseMs?: number;
  /**
   * What becomes of a run whose process stopped (docs/durable-runs.md): `auto` resumes it (this
   * runtime's start-up scan, or its orphan watch when a process sharing the runs directory
   * dies), `manual` marks it interrupted until {@link Runtime.resume}, `off` marks it
   * interrupted for good and cancels the runs a shutdown's grace leaves instead of leaving them
   * to the next start. Needs `persist`. @default 'auto'
   */
  resume?: ResumePolicy;
  /**
   * Who resumes a run found with its owner gone (scale-out workers: an atomic takeover of the
   * run's claim in Redis, src/scale/run-takeover.ts), asked for each such run before this
   * runtime resumes it: the reason to record in `extra.resumes` when this runtime resumes it,
   * undefined to leave the run as it is (another process takes it, or already has).
   * `self` is this runtime's owner id. @default every run resumed here, with the scan's reason
   */
  takeOver?: (
    run: { runId: string; filename: string; owner: string | undefined },
    reason: ResumeReason,
    self: string | undefined,
  ) => Promise<ResumeReason | undefined>;
  /**
   * Checked before a run's end record is written (scale-out workers: the run's claim still names
   * this runtime's owner, see docs/scale-out.md "the fence"): false means another process took
   * the run over, and this runtime then writes no end record and sends no `workflow_end` for it
   * (the run is dropped here, its `done` resolving failed with `taken over`).
   * @default always true
   */
  endFence?: (runId: string, owner: string | undefined) => Promise<boolean>;
  /**
   * Called with every run file the start-up scan reads (after its repair), e.g. to build a run
   * history without reading the directory again. See {@link Runtime.recovery}.
   */
  onStartupRecord?: (record: RunRecord, filename: string) => void;
  /**
   * Byte bounds on content (docs/limits.md), each a positive integer; unset ones keep their
   * default. @default { maxYamlBytes: 1048576, maxExpandedYamlBytes: 4194304,
   * maxTemplateBytes: 1048576, maxStepIoBytes: 1048576, maxRunRecordBytes: 16777216 }
   */
  limits?: Partial<ContentLimits>;
  /**
   * Longest a chunk of a step's streamed model output waits before it goes out in a
   * `token_delta` event, in ms (chunks arriving meanwhile are sent together). @default 100
   */
  tokenDeltaIntervalMs?: number;
  /**
   * Traces runs into this OpenTelemetry provider (the app's own, or the service's OTLP one): a
   * span per run, step attempt, model call and tool call (docs/tracing.md). The runtime never
   * registers a global provider. Without one, runs make no spans and pay nothing per step.
   * @default none (tracing off)
   */
  tracerProvider?: TracerProvider;
  /**
   * Put prompts, model output, tool arguments and results, step inputs and outputs in spans
   * (AGENTIC_TRACE_SENSITIVE; safety control 6). @default false
   */
  traceSensitive?: boolean;
  /** How runs with a budget spend it (docs/budgets.md). @default see {@link BudgetOptions} */
  budgets?: BudgetOptions;
}

/** How runs with a budget (a workflow's `budget:`, {@link RunRequest.budget}) spend it. */
export interface BudgetOptions {
  /**
   * Share of a limit spent from which LLM steps run one tier lower (a budget's own
   * `step_down_at` wins when lower; `AGENTIC_BUDGET_STEP_DOWN_AT`). @default 0.8
   */
  stepDownAt?: number;
  /**
   * Output tokens a model call of a budgeted run may produce, sent as its max_tokens: with its
   * prompt's bytes, the worst case reserved before the call (`AGENTIC_BUDGET_CALL_MAX_TOKENS`).
   * @default 4096
   */
  callMaxTokens?: number;
  /** US dollars of a call of `provider:model` using `usage`; null when unpriced. @default none */
  price?: CallPricer;
  /**
   * The models a call of `tier` (pinned to `model`) may go to (the tier router's `candidates`):
   * its worst-case cost is the dearest of them. @default none (a call reserves no dollars)
   */
  candidates?: (tier: number, model?: string) => readonly string[];
}

/** Where a run's workflow comes from: a name in the workflows dir, a parsed document, or YAML text. */
export type WorkflowSource = string | WorkflowDocument;

/** What `runtime.run` and `runtime.start` take: the workflow, its inputs and per-run settings. */
export interface RunRequest {
  /** Workflow name, a YAML path inside the workflows dir, YAML text, or a parsed document. */
  workflow: WorkflowSource;
  /**
   * Workflow inputs, checked against the workflow's `inputs` before the run starts: strings
   * convert for integer, number and boolean inputs (`"40"`, `"true"`), unknown keys are errors
   * when the workflow declares inputs (see `resolveRunInputs`).
   */
  input?: Record<string, unknown>;
  /** @default the runtime's defaultAdapter */
  adapter?: AdapterName;
  /**
   * 1–128 characters of `[A-Za-z0-9_-]`.
   * @default a generated `<workflow>-<time and 64 random bits>` (see `createRunIdGenerator`)
   */
  runId?: string;
  /** Attempts per step unless the step sets `max_attempts`. @default 1 */
  maxAttempts?: number;
  /** Run timeout in milliseconds. @default the runtime's timeoutMs */
  timeoutMs?: number;
  /** Recorded under `extra` in the run file. */
  extra?: Record<string, unknown>;
  /** First elements of the `loc` of input errors (HTTP: `['body', 'input_data']`). @default ['input'] */
  inputLocPrefix?: (string | number)[];
  /**
   * The trace context the run's span is a child of (the HTTP request's span); ignored when the
   * runtime has no `tracerProvider`. @default none (the run span is a trace root)
   */
  traceContext?: Context;
  /**
   * This run's budget (docs/budgets.md); with the workflow's `budget:`, the stricter wins per
   * dimension. @default the workflow's (none: the run has no budget)
   */
  budget?: RunBudgetRequest;
  /**
   * `false`: `runtime.start` keeps nothing for the handle's `events`, which then yields nothing.
   * For callers that follow runs through `subscribe` instead (the HTTP service, through its
   * event hub): the handle's buffer holds every event of the run until it ends, unbounded.
   * @default true
   */
  events?: boolean;
}

/**
 * What `runtime.rerun` takes besides the source run's id (docs/rerun.md): the step to run again
 * and, optionally, new inputs and the per-run settings of {@link RunRequest}. The fork runs the
 * source run's workflow (by name, as it is now) on a new run id.
 */
export interface RerunRequest extends Omit<RunRequest, 'workflow' | 'input' | 'extra'> {
  /** The step run again, with every step downstream of it (its transitive dependents). */
  fromStep: string;
  /**
   * New values of workflow inputs, checked like a run's inputs: each given key replaces the
   * source run's value, the others are kept. @default the source run's inputs
   */
  inputs?: Record<string, unknown>;
  /**
   * The source run's record when the caller already has it (the service's run history; a
   * runtime with `persist: false` has no file to read it from).
   * @default read from the runs directory (the file named `…_<sourceRunId>.json`)
   */
  source?: RunRecord;
  /** @default the source run's adapter */
  adapter?: AdapterName;
}

/** A started run (`runtime.start`): its id, actor, live events and final record. */
export interface RunHandle {
  /** The run's id (given in the request, or generated). */
  runId: string;
  /**
   * The run actor (XState v5), typed from the run logic: `pending → running → success |
   * failed`, its engine as the `engine` child. Observe it; send it nothing but `run.cancel`.
   */
  actor: RunActor;
  /**
   * This run's wire events, from `workflow_start` to `workflow_end` (none when the request said
   * `events: false`).
   */
  events: AsyncIterable<WorkflowEvent>;
  /** Resolves with the final run record (never rejects). */
  done: Promise<RunRecord>;
}

/** What `runtime.validate` answers; it never throws for an invalid workflow. */
export interface ValidationResult {
  /** Whether the workflow loads: schema, names, dependencies, cycles, expressions. */
  valid: boolean;
  /** The workflow's name when one could be read. */
  name: string | undefined;
  /** Steps in the document (0 when there is no step list). */
  stepCount: number;
  /** What is wrong, one entry per problem (empty when valid). */
  errors: ErrorDetail[];
  /** The compiled workflow when valid. */
  workflow: CompiledWorkflow | undefined;
}

/**
 * Approvals as the HTTP layer sees them: a runtime's own ({@link RuntimeApprovals}), or those of
 * the workers of a deployment, asked through Redis (`src/scale/shared-approvals.ts`).
 */
export interface RunServiceApprovals {
  readonly provider: string;
  readonly showArguments: boolean;
  /** Tool calls and human steps' questions waiting, oldest first. */
  pending(): PendingRequest[] | Promise<PendingRequest[]>;
  answer(callId: string, approve: boolean, reason?: string): RequestAnswer | Promise<RequestAnswer>;
  /** Answers a human step's question (docs/workflow-format.md, "Human steps"). */
  respond(id: string, answer: unknown): RequestAnswer | Promise<RequestAnswer>;
  /**
   * Raises the budget of a run paused at it (docs/budgets.md). @default none (where runs are
   * queued to workers: not available)
   */
  raise?(id: string, limits: BudgetLimits): RequestAnswer | Promise<RequestAnswer>;
}

/** A run a {@link RunService} accepted: its id, and its final record once it has ended. */
export interface StartedRun {
  runId: string;
  /** Resolves with the final run record (never rejects). */
  done: Promise<RunRecord>;
}

/**
 * What the HTTP service needs of whatever executes its runs: a {@link Runtime} in one process,
 * or on an api instance (`AGENTIC_ROLE=api`) the run queue, whose workers execute the runs
 * elsewhere (`src/scale/queued-runtime.ts`). Every `Runtime` is one.
 */
export interface RunService {
  /** Accepts a run: validated (workflow, inputs, run id) before it resolves. */
  start(request: RunRequest): Promise<StartedRun>;
  /**
   * Forks a finished run from one of its steps ({@link Runtime.rerun}). Where runs are queued
   * to workers (`REDIS_URL`) the fork is checked here and queued; a worker runs it seeded.
   */
  rerun(sourceRunId: string, request: RerunRequest): Promise<StartedRun>;
  /** Cancels an active run wherever it executes; false when no such run is active. */
  cancel(runId: string, reason?: string): boolean | Promise<boolean>;
  /** Whether a run with this id is active. */
  isActive(runId: string): boolean;
  /** Ids of active runs. */
  activeRuns(): string[];
  /** Loads and compiles a workflow by name (cached until the file changes). */
  getWorkflow(name: string): Promise<CompiledWorkflow>;
  /**
   * Resumes an interrupted run (see {@link Runtime.resume}); an api instance queues it for a
   * worker.
   */
  resume(runId: string): Promise<StartedRun>;
  /** Every wire event of every run, in order per run. Returns an unsubscribe function. */
  subscribe(listener: (event: WorkflowEvent) => void): () => void;
  /** Called after each run-file write (start and end; also when persist is off). */
  onRecord(listener: (record: RunRecord, filename: string) => void): () => void;
  /**
   * Stops accepting runs; waits up to graceMs for active runs, then cancels them. Queued run
   * records are written (retried until `graceMs` has passed, then abandoned and logged: their
   * runs end `failed`). Cancelling ends at the same deadline (at least 1 s after the grace):
   * runs not reached by then are abandoned, their files keeping the start record, which the
   * next start marks interrupted; one log line counts them.
   */
  shutdown(options?: ShutdownOptions): Promise<void>;
  /** The run-file write queue: pending and failing writes (all zero when persist is off). */
  writes(): RunWriterStatus;
  /** The record of a run that is not on disk yet because its writes are failing. */
  unwrittenRecord(runId: string): UnwrittenRecord | undefined;
  /**
   * The start-up scan of the runs directory, done once per persisting runtime, in the
   * background (runs start meanwhile): runs left `running` by owners that are gone are marked
   * interrupted with their journals folded in, leftovers of dead processes removed. Resolves
   * with what it found (never rejects: a failed scan is logged and reported as empty).
   */
  readonly recovery: Promise<RecoveryReport>;
  readonly options: ResolvedRuntimeOptions;
  /** Pending tool-call approvals, wherever the runs execute. */
  readonly approvals: RunServiceApprovals;
  /**
   * What the engine of a run active in this process knows of its steps (`GET
   * /api/runs/{run_id}/explain`); undefined when no run of that id is active here.
   * @default none (runs execute elsewhere)
   */
  explain?(runId: string): ActiveRunFacts | undefined;
  /**
   * Where a run accepted for the workers is (api instances with Redis): queued (its place in
   * the queue) or taken by a worker; undefined when it is not active in the deployment.
   * @default none
   */
  locate?(runId: string): Promise<RunPlace | undefined>;
}

/** Where a run queued to the workers is ({@link RunService.locate}). */
export type RunPlace =
  | { state: 'queued'; position: number; waiting: number; workflow: string | null }
  | {
      state: 'running';
      worker: string | undefined;
      workflow: string | null;
      /**
       * Its running map steps' item counts, by step name, from the latest item frame of each in
       * the run's event stream. @default none
       */
      items?: ReadonlyMap<string, Readonly<MapProgress>>;
    };

/**
 * A runtime made by `createRuntime`: one XState system running workflows, in this process. What
 * it adds to {@link RunService}: handles with the run actor and its events, a synchronous
 * `cancel`, validation and the workflow list, its own approvals.
 */
export interface Runtime extends RunService {
  /** Starts a run and waits for its end. Rejects only for bad requests (validation, unknown workflow). */
  run(request: RunRequest): Promise<RunRecord>;
  /** Starts a run; resolves once it is running (inputs validated, run file written). */
  start(request: RunRequest): Promise<RunHandle>;
  /**
   * Forks a finished run (docs/rerun.md): a new run of its workflow that reuses the recorded
   * outcomes of the steps upstream of `request.fromStep` (not executed again, no model called)
   * and executes that step and everything downstream of it; its run file has
   * `extra.forked_from: {run_id, step}`. Resolves once it is running, like `start`.
   * @throws NotFoundError (404) no run file of `sourceRunId`; ConflictError (409) the source is
   * still running, or its workflow is gone or no longer has the step; ValidationError (422) the
   * source run has no such step, or the new inputs are invalid
   */
  rerun(sourceRunId: string, request: RerunRequest): Promise<RunHandle>;
  /** Cancels an active run. Returns false when no such run is active. */
  cancel(runId: string, reason?: string): boolean;
  /**
   * Resumes an interrupted run (its process stopped: a crash, a restart, a shutdown whose grace
   * passed) in this runtime, from its run file: same run id and file, the workflow it started
   * with (its pinned copy), finished steps not run again, the interrupted step retried
   * (docs/durable-runs.md). Resolves once it runs again (its new start record written).
   * @throws NotFoundError (404 `run_not_found`) for an unknown run id;
   * `RunNotResumableError` 409 when the run is not interrupted (ended otherwise, active, its
   * process alive), 422 when its workflow is gone or no longer matches its file
   */
  resume(runId: string): Promise<RunHandle>;
  /** Validates a workflow (name, document or YAML text) without running it. */
  validate(source: WorkflowSource): Promise<ValidationResult>;
  /** Workflow names in the workflows directory, sorted. */
  listWorkflows(): Promise<string[]>;
  /** High-risk tool calls waiting for approval, and the way to answer them (docs/tools.md, "Approval"). */
  readonly approvals: RuntimeApprovals;
  /** What the engine of an active run knows of its steps; undefined when it is not active here. */
  explain(runId: string): ActiveRunFacts | undefined;
}

/** Options of {@link Runtime.shutdown}. */
export interface ShutdownOptions {
  /** How long active runs get to end by themselves (ms; default 10,000). */
  graceMs?: number;
  /**
   * The process exits right after (the service's signal handling): runs abandoned at the
   * deadline are left as they are instead of having their actors cancelled one by one (about
   * 0.2 ms a run), so tens of thousands of them do not hold up the exit. Default false: after
   * `shutdown`, no timer or call of the runtime's runs is left.
   */
  exiting?: boolean;
}

/** {@link RuntimeOptions} with every default applied (`runtime.options`). */
export interface ResolvedRuntimeOptions {
  workflowsDir: string;
  runsDir: string;
  persist: boolean;
  noLlm: boolean;
  maxConcurrency: number;
  maxActiveRuns: number;
  maxRunsHeldBytes: number;
  timeoutMs: number | undefined;
  defaultAdapter: AdapterName;
  inspect: Inspector | undefined;
  logger: Logger;
  externalAgentsDir: string | undefined;
  maxAttempts: number;
  retryBaseMs: number;
  writeConcurrency: number;
  writeSync: WriteSyncMode;
  writeQueueMax: number;
  writeRetryBaseMs: number;
  writeRetryMaxMs: number;
  journalCommitMs: number;
  ownerLeaseMs: number;
  resume: ResumePolicy;
  limits: ContentLimits;
  tokenDeltaIntervalMs: number;
  stepTimeoutMs: number;
  budgetStepDownAt: number;
  budgetCallMaxTokens: number;
}
