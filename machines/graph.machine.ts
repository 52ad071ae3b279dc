/**
 * The graph engine: compiles a workflow into an XState v5 machine with a parallel region per step.
 *
 * Shape (every state has a `description` saying what the step does and what it waits for, read
 * in the inspector and the Stately visualizer; each region's `meta` has step, kind, agent, dependsOn,
 * dependents, when, and a map step's map: forEach, as, maxConcurrency, onItemFailure):
 *
 * ```
 * graph_<workflow>                   entry createRun (the scheduler core, from the input)
 *   running (parallel)               entry requestStart (sends itself engine.start)
 *     on engine.start   → startReadySteps (steps without dependencies start)
 *        step.settled   attemptSucceeded → completeStep | retryAllowed → scheduleRetry | failStep
 *        step.retry     → startNextAttempt       step.iteration → emitIteration
 *        step.approval  → markApproval (a tool call started or stopped waiting for approval)
 *        engine.finished → completed             engine.abort   → aborted (abortRun)
 *     <step> (one region per step)
 *       pending    ready {dependsOn, when} → running   conditionFalse {when} → skipped
 *                  stepIs skipped → skipped             stepIs failed → failed
 *       running    stepIs retrying → retrying | success → success | failed → failed
 *                  (steps with tools:) stepIs awaiting_approval → awaiting_approval
 *       awaiting_approval   a tool call waits for the approval gate (step.approval)
 *                  (human steps, instead:) stepIs awaiting_input → awaiting_input
 *       awaiting_input      a human step's question waits for an answer (step.approval)
 *                  stepIs running → running | failed → failed (cancelled while waiting)
 *       retrying   stepIs running → running | failed → failed
 *       success | failed | skipped (final)
 *   completed (final)    every step finished
 *   aborted   (final)    engine.abort: running steps failed, the rest skipped
 * ```
 *
 * The model: the scheduler core (`scheduler/scheduler-core.ts`, shared with the native engine)
 * decides what runs, and this machine is its faithful view. The `running` state's actions hand the
 * core each step event, and each region's eventless (`always`) transitions follow the core's
 * decision through guards that read it, named and parameterised after the conditions the core
 * applied (`ready` carries the step's `dependsOn` and `when:`). One set of rules for both engines
 * (they emit the same event sequence; the conformance suite runs on both), and no step cap: the
 * machine never decides alone, so it needs no bound on how many eventless steps a region takes.
 * Step events are the four types both engines share (`scheduler/step-events.ts`), addressed by
 * `index`, the same for every workflow, so nothing XState keeps per (state node, event type)
 * grows with the workflow. A region's states come from one table, {@link REGION_STATES}: a state
 * per status the core reports; a step kind adds a state with a row.
 *
 * Guards and actions are referenced by name: {@link graphMachineImplementations} provides them,
 * so the plain config ({@link graphMachineConfig}, what `GET /api/workflows/{name}/machine`
 * serves) loads with `createMachine(json).provide(graphMachineImplementations(deps))` and runs.
 * That generic XState path costs O(steps) per event (XState offers each event to every region
 * and re-evaluates every region's `always`); the runtime runs the same machine through
 * `graph.logic.ts`, which applies the same transitions to the one region each event concerns.
 *
 * Pure: imports xstate and types only; truthiness comes in through {@link GraphRunDeps}.
 */
import {
  assign,
  createMachine,
  emit,
  fromCallback,
  setup,
  type AnyActorRef,
  type AnyStateMachine,
} from 'xstate';
import type { AttemptResult, EngineEmitted, EngineInput, EngineOutput } from './engine-contract.js';
import type { CompiledStep, CompiledWorkflow } from '../src/workflow/types.js';
import { stepWords, type StepWords } from './graph-descriptions.js';
import { GraphRun, type GraphRunDeps } from './graph-run.js';
import type { StepRegionState } from './scheduler/scheduler-core.js';
import { SKIP_CONDITION_FALSE } from './scheduler/skip-propagation.js';
import { childActorId, STEP_ITEMS, type ItemCounter } from './view-events.js';

export { GraphRun, SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './graph-run.js';
export type { GraphRunDeps } from './graph-run.js';

/** Events the graph machine handles. */
export interface GraphMachineEvent {
  /**
   * A step event (`step.settled` / `.retry` / `.iteration` / `.approval`), `engine.start`,
   * `engine.finished` or `engine.abort`.
   */
  type: string;
  /** Step events (`scheduler/step-events.ts`, shared with the native engine): the step's index. */
  index?: number;
  /** `engine.abort`: why (running steps fail with it). */
  reason?: string;
  /** `settled` / `iteration`: the attempt it belongs to. */
  attempt?: number;
  /** `settled`: the attempt's result. */
  result?: AttemptResult;
  /** `iteration`: the loop iteration that finished, and its output. */
  iteration?: number;
  /** `approval`: whether the tool call now waits for the approval gate. */
  waiting?: boolean;
  output?: Record<string, unknown> | null;
  /** `xstate.init`: the engine input. */
  input?: EngineInput;
  /** `step.items` (`view-events.ts`): a map step's item counts. */
  items?: ItemCounter;
}

/** The machine's context: the run's scheduler core (made by the root's `createRun` entry). */
export interface GraphContext {
  run: GraphRun | undefined;
  /**
   * The map steps' item counters by step name (`step.items`, `view-events.ts`): each update is a
   * new frozen object, so a snapshot keeps the counts it had. Absent until a map step begins.
   */
  items?: Readonly<Record<string, Readonly<ItemCounter>>>;
}

/** Parameters of the per-step guards (visible in the machine's JSON); `step` is the index. */
export interface StepParams {
  step: number;
  name: string;
  status?: string;
}

/** The XState machine config of a compiled workflow: plain JSON, implementations by name. */
export type GraphMachineConfig = Record<string, unknown>;

function machineId(name: string): string {
  return `graph_${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * Disposes the run (retry timers, in-flight attempts) when its actor completes: done, or stopped
 * mid-run. An observer of the engine actor rather than an invoked cleanup actor: about 1.5 KB
 * less per run. The run is the observer itself (its `complete` method).
 */
export function startRun(run: GraphRun, self: AnyActorRef): GraphRun {
  self.subscribe(run);
  return run;
}

/** An eventless transition of a step region, taken when the core reports the step `status`. */
function follow(step: number, name: string, status: string, description: string) {
  return {
    target: status,
    guard: { type: 'stepIs', params: { step, name, status } },
    description,
  };
}

/** What a region state's eventless transition is guarded by (default: `stepIs` its target). */
type ExitGuard = 'stepIs' | 'ready' | 'conditionFalse';

/** One eventless transition out of a region state, in guard order. */
interface RegionExit {
  target: StepRegionState;
  /** Its description; `when` is the step's `when:` text. */
  why: string | ((when: string) => string);
  guard?: ExitGuard;
}

/**
 * A state of a step region: one row per status the scheduler core's `stepStatus` reports. The
 * region is built from this table, the fast path (`graph.logic.ts`) moves a region to whatever
 * status the core reports, so a step kind adds a state with one row here (and the status in
 * `StepRegionState`): `has` selects the steps that have it, `from` lists the states it is entered
 * from (its transition is put first in theirs), `exits` where it goes next. Rows are in the order
 * the states appear in the machine. A state is a view of the core: no entry or exit actions (the
 * fast path moves regions without running them); a kind's work lives in its executor. A state may
 * declare an `invoke` for the actor that work runs as (a sub-workflow step's child run): the
 * executor makes that actor the engine's child under the invoke's id and reports it
 * (`view-events.ts`), so the live snapshot lists it in `children` while the state is active.
 */
export interface RegionStateRow {
  state: StepRegionState;
  /** Only steps for which this holds have the state (default: every step). */
  has?: (step: CompiledStep) => boolean;
  /** A final state (the step finished). */
  final?: true;
  describe: (words: StepWords) => string;
  /** Entered from these states: a `stepIs` transition put first in each (if the step has it). */
  from?: readonly (readonly [StepRegionState, string])[];
  /** Where it goes next, in guard order (targets the step lacks are left out). */
  exits?: readonly RegionExit[];
  /** The actor the state invokes for this step, if any (see above). */
  invoke?: (step: CompiledStep) => Record<string, unknown> | undefined;
}

/** The states of a step region, in the machine's order. */
export const REGION_STATES: readonly RegionStateRow[] = [
  {
    state: 'pending',
    describe: (w) => w.pending,
    exits: [
      {
        target: 'running',
        guard: 'ready',
        why: 'The scheduler started it: its dependencies finished, its when: held, a slot was free.',
      },
      { target: 'skipped', guard: 'conditionFalse', why: (when) => `Skipped: ${when} was false.` },
      { target: 'skipped', why: 'Skipped: a dependency failed, or the run was aborted.' },
      { target: 'failed', why: 'Its when: or inputs could not be evaluated.' },
    ],
  },
  {
    state: 'running',
    describe: (w) => w.running,
    // A sub-workflow step's child run: the runtime makes its run actor the engine's child with
    // this id (docs/engine.md, "Kinds in the machine").
    invoke: (step) =>
      step.workflowCall === undefined
        ? undefined
        : {
            id: childActorId(step.name),
            src: 'workflowRun',
            input: { step: step.name, workflow: step.workflowCall.workflow },
            description: `The child run of workflow '${step.workflowCall.workflow}' (its own run id and run file), started by the step's executor; the step settles with it.`,
          },
    exits: [
      { target: 'retrying', why: 'The attempt failed with attempts left.' },
      { target: 'success', why: 'The attempt succeeded.' },
      { target: 'failed', why: 'The last attempt failed, or the run was aborted.' },
    ],
  },
  {
    // Only a step with tools has calls that can wait for approval.
    state: 'awaiting_approval',
    has: (step) => step.tools.length > 0,
    describe: (w) => w.awaitingApproval,
    from: [['running', 'A high-risk tool call asked the approval gate.']],
    exits: [
      {
        target: 'running',
        why: 'Approved, denied or timed out: the attempt goes on with the answer.',
      },
      { target: 'failed', why: 'The run was cancelled or timed out while waiting.' },
    ],
  },
  {
    // A human step's question waits for an answer.
    state: 'awaiting_input',
    has: (step) => step.kind === 'human',
    describe: (w) => w.awaitingInput,
    from: [['running', 'Its question was put to a person.']],
    exits: [
      { target: 'success', why: 'Answered (or timed out with a default answer).' },
      {
        target: 'failed',
        why: 'Timed out, or the run was cancelled or timed out while waiting.',
      },
      { target: 'running', why: 'The wait ended: the attempt settles.' },
    ],
  },
  {
    state: 'retrying',
    describe: (w) => w.retrying,
    exits: [
      { target: 'running', why: 'The backoff delay elapsed: the next attempt runs.' },
      { target: 'failed', why: 'The run was aborted while waiting.' },
    ],
  },
  { state: 'success', final: true, describe: (w) => w.success },
  { state: 'failed', final: true, describe: (w) => w.failed },
  { state: 'skipped', final: true, describe: (w) => w.skipped },
];

/** The statuses of a step that started and has not finished: what `ready` accepts. */
const STARTED: ReadonlySet<string> = new Set(
  REGION_STATES.filter((row) => row.final !== true && row.state !== 'pending').map((r) => r.state),
);

/** The region of step `index`: a state per {@link REGION_STATES} row the step has. */
function stepRegion(workflow: CompiledWorkflow, index: number): Record<string, unknown> {
  const step = workflow.steps[index]!;
  const whenValue = workflow.document.steps[index]?.when;
  const when = whenValue === undefined ? undefined : String(whenValue);
  const name = step.name;
  const words = stepWords(workflow, index);
  const rows = REGION_STATES.filter((row) => row.has?.(step) ?? true);
  const present = new Set(rows.map((row) => row.state));
  const transition = (exit: RegionExit) => {
    const why = typeof exit.why === 'string' ? exit.why : exit.why(when ?? '');
    switch (exit.guard) {
      case 'ready':
        return {
          target: exit.target,
          guard: {
            type: 'ready',
            params: {
              step: index,
              name,
              dependsOn: [...step.dependsOn],
              ...(when === undefined ? {} : { when }),
            },
          },
          description: why,
        };
      case 'conditionFalse':
        return {
          target: exit.target,
          guard: { type: 'conditionFalse', params: { step: index, name, when } },
          description: why,
        };
      case 'stepIs':
      case undefined:
        return follow(index, name, exit.target, why);
    }
  };
  const states: Record<string, unknown> = {};
  for (const row of rows) {
    if (row.final === true) {
      states[row.state] = { type: 'final', description: row.describe(words) };
      continue;
    }
    // Entered from a later row: its transition first (see RegionStateRow.from).
    const entries = rows.flatMap((other) =>
      (other.from ?? [])
        .filter(([source]) => source === row.state)
        .map(([, why]) => follow(index, name, other.state, why)),
    );
    const exits = (row.exits ?? [])
      .filter((exit) => present.has(exit.target))
      .filter((exit) => exit.guard !== 'conditionFalse' || when !== undefined)
      .map(transition);
    const invoke = row.invoke?.(step);
    states[row.state] = {
      description: row.describe(words),
      ...(invoke === undefined ? {} : { invoke: [invoke] }),
      always: [...entries, ...exits],
    };
  }
  return {
    initial: 'pending',
    description: words.region,
    meta: {
      step: name,
      kind: step.kind,
      agent: step.agent,
      ...(step.workflowCall === undefined ? {} : { workflow: step.workflowCall.workflow }),
      dependsOn: [...step.dependsOn],
      dependents: step.dependentsIndex.map((d) => workflow.steps[d]!.name),
      ...(when === undefined ? {} : { when }),
      ...(step.map === undefined
        ? {}
        : {
            map: {
              forEach: step.map.source,
              as: step.map.as,
              maxConcurrency: step.map.maxConcurrency,
              onItemFailure: step.map.onItemFailure,
              // Where the live snapshot keeps its item counts (step.items → countItems).
              counter: `context.items.${name}`,
            },
          }),
    },
    states,
  };
}

/**
 * The machine config of `workflow` as plain JSON: what `GET /api/workflows/{name}/machine` serves
 * and `createMachine(config).provide(graphMachineImplementations(deps))` runs.
 */
export function graphMachineConfig(workflow: CompiledWorkflow): GraphMachineConfig {
  const regions: Record<string, unknown> = {};
  workflow.steps.forEach((step, index) => {
    // Step names are validated as `[A-Za-z0-9_-]+` and unique: safe state keys.
    regions[step.name] = stepRegion(workflow, index);
  });
  return {
    id: machineId(workflow.name),
    description: `Workflow "${workflow.name}"${workflow.description ? `: ${workflow.description}` : ''}. One region per step; a step starts once its dependencies finished and its when: holds.`,
    context: {},
    entry: [{ type: 'createRun' }],
    initial: 'running',
    states: {
      running: {
        type: 'parallel',
        description:
          'Steps run (at most maxConcurrency at once, ready steps in YAML order); each region is one step.',
        // Steps start on the run's first event, not on entry: the initial snapshot shows every
        // step pending (an inspector sees each region leave `pending`).
        entry: [{ type: 'requestStart' }],
        on: {
          'engine.start': {
            actions: [{ type: 'startReadySteps' }, { type: 'emitEvents' }],
            description:
              'The run started: steps without dependencies are ready and start (up to maxConcurrency).',
          },
          'step.settled': [
            {
              guard: { type: 'attemptSucceeded' },
              actions: [{ type: 'completeStep' }, { type: 'emitEvents' }],
              description:
                'An attempt succeeded: outputs mapped; dependents whose dependencies all finished are ready.',
            },
            {
              guard: { type: 'retryAllowed' },
              actions: [{ type: 'scheduleRetry' }, { type: 'emitEvents' }],
              description: 'An attempt failed with attempts left: retry after the backoff delay.',
            },
            {
              actions: [{ type: 'failStep' }, { type: 'emitEvents' }],
              description: 'The last attempt failed: transitive dependents are skipped.',
            },
          ],
          'step.retry': {
            actions: [{ type: 'startNextAttempt' }, { type: 'emitEvents' }],
            description: 'A retry delay elapsed: the next attempt starts.',
          },
          'step.iteration': {
            actions: [{ type: 'emitIteration' }, { type: 'emitEvents' }],
            description: 'A loop iteration finished (loop_until not yet true).',
          },
          'step.approval': {
            actions: [{ type: 'markApproval' }],
            description:
              'A tool call of a step started or stopped waiting for the approval gate (its region shows awaiting_approval meanwhile).',
          },
          ...(workflow.steps.some((step) => step.map !== undefined)
            ? {
                [STEP_ITEMS]: {
                  actions: [{ type: 'countItems' }],
                  description:
                    "A map step began or some of its items settled (about 100 updates for any list): context.items.<step> = {total, done, failed, running}, the region's counter.",
                },
              }
            : {}),
          'engine.finished': {
            target: 'completed',
            description: 'The last step finished (the run sends this once).',
          },
          'engine.abort': {
            target: 'aborted',
            actions: [{ type: 'abortRun' }, { type: 'emitEvents' }],
            description:
              'Cancel or run timeout: running steps fail with the reason, the rest are skipped.',
          },
        },
        states: regions,
      },
      completed: {
        type: 'final',
        description:
          'Every step finished (succeeded, failed or skipped); the output holds the outcomes, the context variables and the workflow outputs.',
      },
      aborted: {
        type: 'final',
        description:
          'engine.abort (cancel or run timeout): running steps failed with the reason, their attempts were aborted, unfinished steps were skipped.',
      },
    },
  };
}

/** The item counters with step `name`'s set to `items`: new frozen objects (snapshots are values). */
export function countedItems(
  counters: GraphContext['items'],
  name: string,
  items: ItemCounter,
): Readonly<Record<string, Readonly<ItemCounter>>> {
  const { total, done, failed, running } = items;
  return Object.freeze({
    ...counters,
    [name]: Object.freeze({ total, done, failed, running }),
  });
}

/** What the guards and actions read. */
export interface Args {
  context: GraphContext;
  event: GraphMachineEvent;
}

function runOf(context: GraphContext): GraphRun {
  if (context.run === undefined) throw new Error('graph machine: no run (createRun did not run)');
  return context.run;
}

/**
 * The guards and actions the machine references by name, for
 * `createMachine(config).provide(graphMachineImplementations(deps))`. Guards read the scheduler
 * core's decisions; actions hand it the step events.
 */
export function graphMachineImplementations(deps: GraphRunDeps) {
  const status = (context: GraphContext, params: StepParams) =>
    runOf(context).stepStatus(params.step);
  return {
    guards: {
      attemptSucceeded: ({ event }: Args) => event.result?.ok === true,
      retryAllowed: ({ context, event }: Args) =>
        runOf(context).canRetry(event.index ?? 0, event.attempt ?? 0),
      ready: ({ context }: Args, params: StepParams) => {
        return STARTED.has(status(context, params));
      },
      conditionFalse: ({ context }: Args, params: StepParams) =>
        runOf(context).skipReason(params.step) === SKIP_CONDITION_FALSE,
      stepIs: ({ context }: Args, params: StepParams) => status(context, params) === params.status,
    },
    actions: {
      createRun: assign(({ event, self }: { event: GraphMachineEvent; self: AnyActorRef }) => ({
        run: startRun(new GraphRun(event.input!, self, deps), self),
      })),
      // The one emit action each transition lists after its step action: the run's pending
      // engine events as one event (the engine dispatch unpacks `engine.batch`).
      emitEvents: emit(({ context }: { context: GraphContext }) => runOf(context).takeEmitted()),
      requestStart: ({ self }: { self: AnyActorRef }) => self.send({ type: 'engine.start' }),
      startReadySteps: ({ context }: Args) => runOf(context).begin(),
      completeStep: ({ context, event }: Args) => {
        if (event.result === undefined || event.attempt === undefined) return;
        runOf(context).succeed(event.index ?? -1, event.attempt, event.result);
      },
      scheduleRetry: ({ context, event }: Args) => {
        if (event.result === undefined || event.attempt === undefined) return;
        runOf(context).scheduleRetry(event.index ?? -1, event.attempt, event.result);
      },
      failStep: ({ context, event }: Args) => {
        if (event.result === undefined || event.attempt === undefined) return;
        runOf(context).fail(event.index ?? -1, event.attempt, event.result);
      },
      startNextAttempt: ({ context, event }: Args) => runOf(context).retry(event.index ?? -1),
      emitIteration: ({ context, event }: Args) => {
        if (event.attempt === undefined || event.iteration === undefined) return;
        runOf(context).iteration(
          event.index ?? -1,
          event.attempt,
          event.iteration,
          event.output ?? null,
        );
      },
      markApproval: ({ context, event }: Args) => {
        if (event.attempt === undefined) return;
        runOf(context).approval(event.index ?? -1, event.attempt, event.waiting === true);
      },
      abortRun: ({ context, event }: Args) => runOf(context).abort(event.reason ?? 'aborted'),
      countItems: assign(({ context, event }: Args) => {
        const name = runOf(context).stepName(event.index ?? -1);
        if (name === undefined || event.items === undefined) return {};
        return { items: countedItems(context.items, name, event.items) };
      }),
    },
    actors: {
      // What runs is the child run the step's executor starts (the runtime path lists that actor
      // under the invoke's id); a machine loaded from its JSON has no runtime to start runs, so
      // its invoke starts this stand-in, stopped when the state exits.
      workflowRun: fromCallback(() => undefined),
    },
  };
}

/**
 * Builds the machine for one workflow: {@link graphMachineConfig} with
 * {@link graphMachineImplementations}, and the run's output (outcomes, context, final output).
 */
export function createGraphMachine(workflow: CompiledWorkflow, deps: GraphRunDeps): GraphMachine {
  const config = {
    ...graphMachineConfig(workflow),
    output: ({ context }: { context: GraphContext }) => runOf(context).output(),
  };
  const implementations = graphMachineImplementations(deps);
  return createMachine(config as never).provide(
    implementations as unknown as Parameters<AnyStateMachine['provide']>[0],
  ) as unknown as GraphMachine;
}

/**
 * The types of the compiled machine (its config is built from the workflow at run time, so its
 * types are declared here, never called).
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- used only as a type
function graphMachineTypes() {
  return setup({
    types: {
      context: {} as GraphContext,
      events: {} as GraphMachineEvent,
      input: {} as EngineInput,
      output: {} as EngineOutput,
      emitted: {} as EngineEmitted,
    },
  }).createMachine({ context: { run: undefined } });
}

/** The compiled machine (an XState machine; its context holds the run's scheduler core). */
export type GraphMachine = ReturnType<typeof graphMachineTypes>;
