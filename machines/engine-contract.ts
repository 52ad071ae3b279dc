/**
 * The contract between the run actor and an engine (native or graph): what an engine is given,
 * what it emits and what it finishes with. It lives beside the machines that keep it; `src/engine`
 * imports it, never the other way.
 *
 * An engine is XState actor logic ({@link EngineLogic}). The run logic is given it with
 * `createRunLogic(engine)` and spawns it as its `engine` child with an
 * {@link EngineInput}; the engine schedules steps, runs each attempt through the injected
 * {@link AttemptRunner}, hands its {@link EngineEvent}s to the input's `observer` and emits them
 * (XState `emit`, observed with `actor.on(...)`), and finishes (snapshot status `done`) with an
 * {@link EngineOutput}.
 *
 * Invariants every adapter keeps (the conformance suite checks them on both):
 * - exactly one `step.finished` per step, skips included, in the order steps finish;
 * - a step starts only when every dependency has finished; a dependency skipped by a false
 *   `when:` counts as finished; a failed dependency skips all transitive dependents with
 *   reason `dependency failed: <step>`;
 * - on `engine.abort` every running attempt is aborted, running steps fail with the abort
 *   reason, unfinished steps are skipped, and the engine completes promptly;
 * - a step seeded as finished ({@link EngineSeed}) is never attempted: its `step.finished`
 *   (marked `seeded`) comes first, in YAML order, before any step starts, and its output, its
 *   `outputs:` context writes and the `when:` / dependencies that read it act as if it had just
 *   run; a step seeded with attempts already made continues its attempt count, its budget
 *   raised by its interruptions.
 */
import type {
  ActorLogic,
  ActorScope,
  ActorSystem,
  ActorSystemInfo,
  AnyEventObject,
  Snapshot,
} from 'xstate';
import type {
  CompiledStep,
  CompiledWorkflow,
  EvalScope,
  FinishedStepStatus,
} from '../src/workflow/types.js';
import type { TokenUsage } from '../src/llm/types.js';
import type {
  AgentMessage,
  MapItemsSummary,
  VerificationResult,
} from '../src/generated/run-record.js';

/** Result of one attempt of a step (loop iterations included). */
export interface AttemptResult {
  ok: boolean;
  output: Record<string, unknown> | null;
  error: string | null;
  modelUsed: string | null;
  tokensUsed: TokenUsage | null;
  iterations: number;
  /** The verification of a step with `verify:` (undefined without one). */
  verification?: VerificationResult;
  /** The attempt's `tool_call` / `tool_result` messages (undefined when it called no tool). */
  messages?: AgentMessage[];
  /** A map step's items: counts and first failures (undefined for other kinds). */
  items?: MapItemsSummary;
}

/** Final outcome of a step. */
export interface StepOutcome {
  status: FinishedStepStatus;
  input: unknown;
  output: Record<string, unknown> | null;
  error: string | null;
  skipReason: string | null;
  modelUsed: string | null;
  tokensUsed: TokenUsage | null;
  /** Attempts made (0 for a skipped step). */
  attempts: number;
  iterations: number;
  /** Epoch ms; null for a skipped step. */
  startTime: number | null;
  endTime: number;
  /** The last attempt's verification (steps with `verify:`). @default undefined */
  verification?: VerificationResult | undefined;
  /** The last attempt's tool calls and results. @default undefined */
  messages?: AgentMessage[] | undefined;
  /** A map step's items (its last attempt's). @default undefined */
  items?: MapItemsSummary | undefined;
  /**
   * The outcome was taken from another run (a fork's reused step, seeded): that run's id and
   * what it spent on the step (this run spent nothing: `tokensUsed` is null). @default undefined
   */
  reusedFrom?: { runId: string; tokensUsed: TokenUsage | null } | undefined;
}

/** Runs one attempt of a step: the agent call (with loop_until iterations and the per-step timeout). */
export type AttemptRunner = (request: {
  step: CompiledStep;
  input: Record<string, unknown>;
  scope: EvalScope;
  attempt: number;
  /** When the attempt started (epoch ms): its `step.started` time. */
  startedAt?: number;
  /** The run's abort signal. The engines make it when first read (see `aborted`). */
  signal: AbortSignal;
  /**
   * Whether the run was aborted: `signal.aborted`, readable without making the signal. Runners
   * read this when present and pass agents a request whose `signal` is read only if they use it.
   */
  aborted?: boolean;
  /** Called for each finished loop iteration except the last. */
  onIteration?: (iteration: number, output: Record<string, unknown> | null) => void;
  /** Called when a tool call of the attempt starts (`true`) or stops waiting for approval. */
  onApproval?: (waiting: boolean) => void;
  /**
   * The map item this attempt of a map step's body is for: its index in the list, and the map
   * step's own attempt (above 1 only in a resumed run). @default none (not a map's body)
   */
  item?: { index: number; stepAttempt: number };
}) => Promise<AttemptResult>;

/** Timer functions, injectable so tests can drive time. */
export interface EngineClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface EngineInput {
  runId: string;
  workflow: CompiledWorkflow;
  /** Run inputs after defaults and checks. */
  inputs: Readonly<Record<string, unknown>>;
  /** Most steps running at once (native); the graph adapter may ignore it. */
  maxConcurrency: number;
  /** Attempts per step unless the step sets `max_attempts`. */
  maxAttempts: number;
  runAttempt: AttemptRunner;
  /**
   * What the run keeps of a step's rendered input (the attempts, events and record get it): the
   * input itself, or a copy with truncation markers once the run's byte budget is spent. It may
   * throw (the runtime's budget for all runs is spent): the step then fails with its message,
   * like an input that cannot be rendered. The attempt runner bounds outputs the same way.
   * @default keeps every input
   */
  holdInput?: ((input: unknown) => unknown) | undefined;
  /** Delay before attempt `attempt + 1` after attempt `attempt` failed (backoff with jitter). */
  retryDelayMs: (attempt: number) => number;
  clock: EngineClock;
  /**
   * The run's observer: receives every engine event, in order, as the engine takes it from its
   * outbox (before XState's `emit` reaches `actor.on(...)` listeners). Passed in the input rather
   * than attached with `actor.on('*')`, which copies the listener list on every emitted event.
   * An observer that throws does not disturb the engine: the error is reported as uncaught, as
   * XState reports a throwing listener. @default none
   */
  observer?: ((event: EngineEvent) => void) | undefined;
  /**
   * Steps done before this engine started: a resumed run (its journal) or a run forked from
   * another (the source's upstream steps). @default none: every step runs
   */
  seed?: EngineSeed | undefined;
}

/** The error of a step whose interrupted attempt may not run again (see {@link EngineSeed}). */
export const STEP_INTERRUPTED = 'interrupted';

/**
 * What a run starts with when it does not start from nothing (see {@link EngineInput.seed}).
 *
 * - `steps`: finished steps by name, with their recorded outcome. Such a step is not executed: at
 *   begin the engine reports it with a `step.finished` marked `seeded`, writes its `outputs:`
 *   into the context (a success), releases its dependents (a success, or a skip by a false
 *   `when:`) or skips them (a failure, `dependency failed: <step>`), exactly as when it finishes
 *   in the run. Its outcome is reported as given (times, attempts, tokens).
 * - `attempts`: steps that had started and not finished, by name, with the attempts they had
 *   begun (a process died under them, during the last one). Such a step runs again, from
 *   attempt `attempts + 1`. An interruption is not a failure of the step: each one adds an
 *   attempt to its `max_attempts` budget, so its own failures are bounded as in a run that was
 *   never interrupted. Interruptions are bounded too (a step that kills its process every time):
 *   a step interrupted more times than its `max_attempts`, or one that says `resume: fail` (it
 *   must not run twice), fails with {@link STEP_INTERRUPTED} and `attempts` attempts, without a
 *   new attempt.
 * - `interruptions`: how many times each step of `attempts` was interrupted, this time
 *   included. @default 1 for each step of `attempts`
 *
 * Names the workflow does not have are ignored; a name in `steps` counts as finished.
 */
export interface EngineSeed {
  steps: ReadonlyMap<string, StepOutcome>;
  attempts?: ReadonlyMap<string, number> | undefined;
  interruptions?: ReadonlyMap<string, number> | undefined;
}

export interface EngineOutput {
  outcomes: StepOutcome[];
  /** Context variables written by step `outputs` mappings. */
  context: Record<string, unknown>;
  /** The workflow `outputs` mapping resolved at the end. */
  finalOutput: Record<string, unknown>;
}

/** Events an engine emits for observers (internal, dotted; src/events maps them to wire events). */
export type EngineEvent =
  | { type: 'step.started'; index: number; attempt: number; input: unknown; time: number }
  | {
      type: 'step.retrying';
      index: number;
      attempt: number;
      error: string;
      delayMs: number;
      time: number;
      durationMs: number;
    }
  | {
      type: 'step.iteration';
      index: number;
      iteration: number;
      output: Record<string, unknown> | null;
      time: number;
    }
  | {
      type: 'step.finished';
      index: number;
      outcome: StepOutcome;
      /** The step was seeded as finished ({@link EngineSeed}): it did not run in this engine. */
      seeded?: true;
    };

/**
 * Several {@link EngineEvent}s emitted at once, in order (both engines emit the events of one
 * transition as one). Internal: {@link forEachEngineEvent} unpacks it, so the run's observers see only
 * the individual events.
 */
export interface EngineBatchEvent {
  type: 'engine.batch';
  events: readonly EngineEvent[];
}

/** What an engine actor emits: an {@link EngineEvent}, or several in an {@link EngineBatchEvent}. */
export type EngineEmitted = EngineEvent | EngineBatchEvent;

/** Calls `handler` with each engine event `emitted` carries, in order (a batch is unpacked). */
export function forEachEngineEvent(
  emitted: EngineEmitted,
  handler: (event: EngineEvent) => void,
): void {
  if (emitted.type !== 'engine.batch') {
    handler(emitted);
    return;
  }
  const events = emitted.events;
  for (let i = 0; i < events.length; i++) handler(events[i]!);
}

/** Hands each event of `emitted` to `observer` (see {@link EngineInput.observer}). */
export function notifyObserver(
  observer: (event: EngineEvent) => void,
  emitted: EngineEmitted,
): void {
  try {
    forEachEngineEvent(emitted, observer);
  } catch (error) {
    setTimeout(() => {
      throw error;
    });
  }
}

/** Events the run actor sends to the engine. */
export type EngineCommand = { type: 'engine.abort'; reason: string };

/** What the run actor reads of an engine's snapshot: XState's status, output and error. */
export type EngineSnapshot = Snapshot<EngineOutput>;

/** The actor system engines run in (XState's own system type; engines use no system ids). */
export type EngineSystem = ActorSystem<ActorSystemInfo>;

/** The actor scope an engine is given (its own snapshot type, read by nobody else). */
export type EngineScope = ActorScope<EngineSnapshot, AnyEventObject, EngineSystem, EngineEmitted>;

/**
 * The actor logic of an engine, as the run actor sees it: XState's `ActorLogic` with the engine's
 * input and emitted events. The members are declared as methods so that an engine with its own
 * snapshot type (a machine snapshot, the native scheduler's core) and its own event type is one:
 * the run actor reads only status, output and error, and an actor only ever hands a logic the
 * snapshots that logic made.
 */
export interface EngineLogic extends ActorLogic<
  EngineSnapshot,
  AnyEventObject,
  EngineInput,
  EngineSystem,
  EngineEmitted
> {
  transition(snapshot: EngineSnapshot, event: AnyEventObject, scope: EngineScope): EngineSnapshot;
  getInitialSnapshot(scope: EngineScope, input: EngineInput): EngineSnapshot;
  start?(snapshot: EngineSnapshot, scope: EngineScope): void;
  getPersistedSnapshot(snapshot: EngineSnapshot, options?: unknown): Snapshot<unknown>;
  restoreSnapshot?(snapshot: Snapshot<unknown>, scope: EngineScope): EngineSnapshot;
}
