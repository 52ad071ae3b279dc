/**
 * The run actor: one per workflow run, `pending → running → success | failed`, with the engine
 * (native scheduler or compiled graph machine) invoked as its `engine` child. Cancellation and
 * the run timeout are transitions that send `engine.abort` to the engine, which fails running
 * steps, skips the rest and finishes; the run's outcome is decided from the engine's output.
 *
 * Pure: the engine logic is supplied with `.provide({ actors: { engine } })`; the run timeout is
 * a delayed transition (`after: runTimeout`, read from the input), timed by the XState system's
 * clock, which the runtime injects (`createActor(..., { clock })`). It is not meant to survive
 * persistence (ARCHITECTURE §4): runs are not restored across processes.
 */
import { assign, emit, sendTo, setup, type ActorRefFrom, type Snapshot } from 'xstate';
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

interface RunContext {
  runId: string;
  timeoutMs: number | undefined;
  engineInput: EngineInput;
  abortReason: string | null;
  error: string | null;
  engineOutput: EngineOutput | null;
}

/** Events a run actor accepts. */
export type RunEvent = { type: 'run.begin' } | { type: 'run.cancel'; reason?: string };

/** Events a run actor emits for observers (`actor.on`). */
export type RunEmitted = { type: 'run.started' };

/** Abort reason of a cancelled run. */
export const CANCELLED = 'cancelled';
/** Abort reason of a run whose timeout expired. */
export const RUN_TIMED_OUT = 'run timed out';

/** The default `engine`: fails at once, so a machine used without `.provide` says why. */
type MissingEngineSnapshot = Snapshot<EngineOutput>;
const engineNotProvided: EngineLogic = {
  transition: (snapshot: MissingEngineSnapshot) => snapshot,
  getInitialSnapshot: (): MissingEngineSnapshot => ({
    status: 'error',
    output: undefined,
    error: new Error('run machine: no engine provided (use .provide({ actors: { engine } }))'),
  }),
  getPersistedSnapshot: (snapshot: MissingEngineSnapshot) => snapshot,
};

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

export const runMachine = setup({
  types: {
    context: {} as RunContext,
    input: {} as RunMachineInput,
    events: {} as RunEvent,
    emitted: {} as RunEmitted,
    output: {} as RunResult,
  },
  actors: { engine: engineNotProvided },
  delays: {
    runTimeout: ({ context }) => context.timeoutMs ?? 0,
  },
  guards: {
    hasTimeout: ({ context }) => context.timeoutMs !== undefined && context.timeoutMs > 0,
    notAborting: ({ context }) => context.abortReason === null,
  },
  actions: {
    abortEngine: sendTo('engine', ({ context }) => ({
      type: 'engine.abort',
      reason: context.abortReason ?? CANCELLED,
    })),
  },
}).createMachine({
  id: 'run',
  description: 'One workflow run: accepted, executing its engine child, then success or failed.',
  initial: 'pending',
  context: ({ input }) => ({
    runId: input.runId,
    timeoutMs: input.timeoutMs,
    engineInput: input.engine,
    abortReason: null,
    error: null,
    engineOutput: null,
  }),
  states: {
    pending: {
      description:
        'Accepted: inputs checked, the initial run file being written. Waits for run.begin.',
      on: {
        // The timed/untimed choice is made here rather than by an eventless transition out of
        // a transient child state (one microstep less per run).
        'run.begin': [
          { guard: 'hasTimeout', target: 'running.timed' },
          { target: 'running.untimed' },
        ],
        'run.cancel': {
          target: 'failed',
          actions: assign(({ event }) => ({
            abortReason: event.reason ?? CANCELLED,
            error: event.reason ?? CANCELLED,
          })),
        },
      },
    },
    running: {
      description:
        'The engine child schedules and runs the steps. Cancel and the run timeout abort it; its output decides success or failure.',
      entry: emit({ type: 'run.started' }),
      invoke: {
        id: 'engine',
        src: 'engine',
        input: ({ context }) => context.engineInput,
        // The run succeeded iff no step failed and it was not aborted (decided on the done
        // event itself: no transient state and eventless transition per run).
        onDone: [
          {
            guard: ({ context, event }) =>
              context.abortReason === null && firstFailure(context, event.output) === null,
            target: 'success',
            actions: assign({ engineOutput: ({ event }) => event.output }),
          },
          {
            target: 'failed',
            actions: assign(({ context, event }) => {
              const output = event.output;
              return {
                engineOutput: output,
                error: context.abortReason ?? firstFailure(context, output),
              };
            }),
          },
        ],
        onError: {
          target: 'failed',
          actions: assign(({ event }) => ({ error: errorText(event.error) })),
        },
      },
      on: {
        'run.cancel': {
          guard: 'notAborting',
          actions: [
            assign(({ event }) => ({ abortReason: event.reason ?? CANCELLED })),
            'abortEngine',
          ],
        },
      },
      initial: 'untimed',
      states: {
        untimed: {
          description: 'No run timeout: waits for the engine to finish.',
        },
        timed: {
          description: 'Waits for the engine; when the run timeout expires, aborts it.',
          after: {
            runTimeout: {
              guard: 'notAborting',
              target: 'timedOut',
              actions: [assign({ abortReason: RUN_TIMED_OUT }), 'abortEngine'],
            },
          },
        },
        timedOut: {
          description:
            'The run timeout expired; the engine is failing running steps and finishing.',
        },
      },
    },
    success: {
      description: 'Every step succeeded or was skipped by its condition.',
      type: 'final',
    },
    failed: {
      description: 'A step failed, the run was cancelled or timed out, or the engine failed.',
      type: 'final',
    },
  },
  output: ({ context }) => ({
    status: context.error === null ? 'success' : 'failed',
    error: context.error,
    engine: context.engineOutput,
  }),
});

/**
 * A run actor (`RunHandle.actor`): the run machine's actor, so `getSnapshot().value`,
 * `.matches(...)`, `.status` and `.output` (a {@link RunResult}) are typed. Send it only
 * `run.cancel` (or use `runtime.cancel`).
 */
export type RunActor = ActorRefFrom<typeof runMachine>;
