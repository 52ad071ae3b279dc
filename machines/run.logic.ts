/**
 * The run actor: one per workflow run, `pending → running → success | failed`, with the engine
 * (native scheduler or compiled graph machine) as its `engine` child. Cancellation and the run
 * timeout send `engine.abort` to the engine, which fails running steps, skips the rest and
 * finishes; the run's outcome is decided from the engine's output.
 *
 * Hand-written `ActorLogic` (like the native scheduler), not a `createMachine` machine, because a
 * run's own set-up was most of what a run cost: with the machine, concurrent 5-step no-op runs
 * spent about half their CPU interpreting it (its initial snapshot, two microsteps with their
 * state-node sets, the `invoke`) and it made ~45 KB of the ~80 KB a run allocated. Measured on
 * dist/ (docs/benchmarks.md, "Many runs"): `run()` CPU per run 0.54× the machine's, the HTTP
 * service's CPU per run about 0.8×. The states, their values, the events, what is emitted and
 * the output are the machine's: `value` is `'pending'`,
 * `{ running: 'untimed' | 'timed' | 'timedOut' }`, `'success'` or `'failed'`, and `matches`
 * answers as a machine snapshot's does.
 *
 * Pure: the engine logic is passed in; the run timeout is a delayed self-event scheduled on the
 * XState system's scheduler (so timed by the clock the runtime injects, `SimulatedClock` in
 * tests) and cancelled when the engine finishes first. It is not meant to survive persistence
 * (ARCHITECTURE §4): its snapshot holds the engine child.
 */
import type {
  ActorLogic,
  ActorRefFrom,
  ActorScope,
  AnyActorRef,
  ActorSystem,
  ActorSystemInfo,
  Snapshot,
} from 'xstate';
import { createActor } from 'xstate';
import type { EngineInput, EngineLogic, EngineOutput } from './engine-contract.js';

export interface RunMachineInput {
  runId: string;
  /** Run timeout in ms; undefined for none. */
  timeoutMs: number | undefined;
  /** Handed to the engine child unchanged. */
  engine: EngineInput;
}

/** The run actor's output (its done snapshot's `output`). */
export interface RunResult {
  status: 'success' | 'failed';
  /** Why the run failed: the abort reason, the first failed step, or the engine's error. */
  error: string | null;
  /** The engine's output; null when the engine never finished (cancelled while pending, engine error). */
  engine: EngineOutput | null;
}

/** Events a run actor accepts. */
export type RunEvent = { type: 'run.begin' } | { type: 'run.cancel'; reason?: string };

/** Events a run actor emits for observers (`actor.on`). */
export type RunEmitted = { type: 'run.started' };

/** Abort reason of a cancelled run. */
export const CANCELLED = 'cancelled';
/** Abort reason of a run whose timeout expired. */
export const RUN_TIMED_OUT = 'run timed out';

/** Where a run is: the run machine's state values. */
export type RunStateValue =
  'pending' | { running: 'untimed' | 'timed' | 'timedOut' } | 'success' | 'failed';

/** What `matches` takes: a state value, or a parent state alone (`'running'`). */
export type RunStateMatch = RunStateValue | 'running';

export interface RunContext {
  runId: string;
  timeoutMs: number | undefined;
  engineInput: EngineInput;
  abortReason: string | null;
  error: string | null;
  engineOutput: EngineOutput | null;
}

/** The run actor's snapshot: XState's status/output plus the machine's `value` and `matches`. */
export type RunSnapshot = Snapshot<RunResult> & {
  readonly value: RunStateValue;
  readonly context: RunContext;
  /** Whether the run is in `state` (a machine snapshot's `matches`). */
  matches(state: RunStateMatch): boolean;
};

/** The snapshot with the engine child, which only the logic (and {@link runEngineOf}) reads. */
type RunState = RunSnapshot & { readonly engineRef: AnyActorRef | undefined };

/** The engine child of a run's snapshot (what `/explain` reads the step facts from), if any. */
export function runEngineOf(snapshot: RunSnapshot): AnyActorRef | undefined {
  return (snapshot as RunState).engineRef;
}

/** Inspector-facing descriptions of the states (what the machine's `description`s said). */
export const RUN_STATE_DESCRIPTIONS = {
  pending: 'Accepted: inputs checked, the initial run file being written. Waits for run.begin.',
  running:
    'The engine child schedules and runs the steps. Cancel and the run timeout abort it; its output decides success or failure.',
  'running.untimed': 'No run timeout: waits for the engine to finish.',
  'running.timed': 'Waits for the engine; when the run timeout expires, aborts it.',
  'running.timedOut': 'The run timeout expired; the engine is failing running steps and finishing.',
  success: 'Every step succeeded or was skipped by its condition.',
  failed: 'A step failed, the run was cancelled or timed out, or the engine failed.',
} as const;

type RunLogicEvent =
  | RunEvent
  | { type: 'run.timeout' }
  | { type: 'xstate.done.actor.engine'; output: EngineOutput }
  | { type: 'xstate.error.actor.engine'; error: unknown }
  | { type: 'xstate.stop' };

export type RunLogic = ActorLogic<RunSnapshot, RunEvent, RunMachineInput, RunSystem, RunEmitted>;
type Scope = ActorScope<RunSnapshot, RunEvent, RunSystem, RunEmitted>;

/** A run actor (`RunHandle.actor`): `getSnapshot().value`, `.matches(...)`, `.status`, `.output`. */
export type RunActor = ActorRefFrom<RunLogic>;

type RunSystem = ActorSystem<ActorSystemInfo>;

/** The scheduler id of the run timeout (one per run actor). */
const TIMEOUT_ID = 'run.timeout';

/** One function for every snapshot (an own property, so a copied snapshot keeps it). */
function matches(this: RunSnapshot, state: RunStateMatch): boolean {
  const value = this.value;
  if (typeof state === 'string') {
    return typeof value === 'string' ? value === state : state === 'running';
  }
  return typeof value === 'object' && value.running === state.running;
}

/** What JSON (an inspector) shows of a snapshot: no engine child, no engine input. */
function toJSON(this: RunState) {
  const { runId, timeoutMs, abortReason, error } = this.context;
  return {
    status: this.status,
    value: this.value,
    output: this.output,
    error: this.error,
    context: { runId, timeoutMs, abortReason, error },
  };
}

const UNTIMED = { running: 'untimed' } as const;
const TIMED = { running: 'timed' } as const;
const TIMED_OUT = { running: 'timedOut' } as const;

function state(
  status: RunSnapshot['status'],
  value: RunStateValue,
  context: RunContext,
  engineRef: AnyActorRef | undefined,
): RunState {
  return {
    status,
    value,
    context,
    engineRef,
    output:
      status === 'done'
        ? {
            status: context.error === null ? 'success' : 'failed',
            error: context.error,
            engine: context.engineOutput,
          }
        : undefined,
    error: undefined,
    matches,
    toJSON,
  } as RunState;
}

function firstFailure(context: RunContext, output: EngineOutput): string | null {
  const outcomes = output.outcomes;
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i];
    if (outcome?.status !== 'failed') continue;
    const name = context.engineInput.workflow.steps[i]?.name ?? String(i);
    return `step '${name}' failed: ${outcome.error ?? 'failed'}`;
  }
  return null;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : 'engine error';
}

/** The run ended: `done` in `success` or `failed`, the timer (if any) cancelled. */
function ended(run: RunState, context: RunContext, scope: Scope): RunState {
  if (run.value !== 'pending' && run.value !== 'success' && run.value !== 'failed') {
    if (run.value.running !== 'untimed') {
      scope.system.scheduler.cancel(scope.self, TIMEOUT_ID);
    }
  }
  return state('done', context.error === null ? 'success' : 'failed', context, undefined);
}

/** Sends `engine.abort` with `reason` to the engine child (after the transition). */
function abortEngine(run: RunState, reason: string, scope: Scope): void {
  const engine = run.engineRef;
  if (engine !== undefined) scope.defer(() => engine.send({ type: 'engine.abort', reason }));
}

/** The run actor's logic, given its engine (one logic per engine logic, shared by its runs). */
export function createRunLogic(engine: EngineLogic): RunLogic {
  return {
    config: {
      id: 'run',
      description:
        'One workflow run: accepted, executing its engine child, then success or failed.',
      states: RUN_STATE_DESCRIPTIONS,
    },
    getInitialSnapshot(_scope, input) {
      return state(
        'active',
        'pending',
        {
          runId: input.runId,
          timeoutMs: input.timeoutMs,
          engineInput: input.engine,
          abortReason: null,
          error: null,
          engineOutput: null,
        },
        undefined,
      );
    },
    transition(snapshot, anyEvent, scope) {
      const run = snapshot as RunState;
      if (run.status !== 'active') return run;
      const event = anyEvent as RunLogicEvent;
      const context = run.context;
      switch (event.type) {
        case 'run.begin': {
          if (run.value !== 'pending') return run;
          const timed = context.timeoutMs !== undefined && context.timeoutMs > 0;
          const child = createActor(engine, {
            parent: scope.self,
            id: 'engine',
            input: context.engineInput,
          });
          // As an invoke does: the child starts once this transition's snapshot is committed.
          scope.defer(() => child.start());
          if (timed) {
            scope.system.scheduler.schedule(
              scope.self,
              scope.self,
              { type: 'run.timeout' },
              context.timeoutMs!,
              TIMEOUT_ID,
            );
          }
          scope.emit({ type: 'run.started' });
          return state('active', timed ? TIMED : UNTIMED, context, child);
        }
        case 'run.cancel': {
          const reason = event.reason ?? CANCELLED;
          if (run.value === 'pending') {
            return ended(run, { ...context, abortReason: reason, error: reason }, scope);
          }
          if (context.abortReason !== null) return run;
          abortEngine(run, reason, scope);
          return state('active', run.value, { ...context, abortReason: reason }, run.engineRef);
        }
        case 'run.timeout': {
          if (run.value === 'pending' || context.abortReason !== null) return run;
          abortEngine(run, RUN_TIMED_OUT, scope);
          return state(
            'active',
            TIMED_OUT,
            { ...context, abortReason: RUN_TIMED_OUT },
            run.engineRef,
          );
        }
        case 'xstate.done.actor.engine': {
          const output = event.output;
          const error = context.abortReason ?? firstFailure(context, output);
          return ended(run, { ...context, engineOutput: output, error }, scope);
        }
        case 'xstate.error.actor.engine':
          return ended(run, { ...context, error: errorText(event.error) }, scope);
        case 'xstate.stop':
          run.engineRef?.stop();
          return state('stopped', run.value, context, undefined);
        default:
          return run;
      }
    },
    getPersistedSnapshot(snapshot) {
      return toJSON.call(snapshot as RunState) as unknown as Snapshot<unknown>;
    },
  };
}
