/**
 * The graph engine: compiles a workflow into an XState v5 machine with a parallel region per step.
 *
 * Shape (every state has a `description` saying what the step does and what it waits for, read
 * in the inspector and the Stately visualizer; each region's `meta` has step, kind, agent, dependsOn,
 * dependents, when):
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
 * The scheduler core (`scheduler/scheduler-core.ts`, shared with the native engine) decides what runs: the
 * `running` state's actions hand it each step event, and each region's eventless (`always`)
 * transitions follow the core's decision through guards that read it, named and parameterised
 * after the conditions the core applied (`ready` carries the step's `dependsOn` and `when:`). Step
 * events are three event types for every workflow, addressed by `step` (the index), so nothing
 * XState keeps per (state node, event type) grows with the workflow.
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
import { assign, createMachine, emit, setup, type AnyActorRef, type AnyStateMachine } from 'xstate';
import type { AttemptResult, EngineEmitted, EngineInput, EngineOutput } from './engine-contract.js';
import type { CompiledWorkflow } from '../src/workflow/types.js';
import { stepWords } from './graph-descriptions.js';
import { GraphRun, type GraphRunDeps } from './graph-run.js';
import { SKIP_CONDITION_FALSE } from './scheduler/skip-propagation.js';

export { GraphRun, SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './graph-run.js';
export type { GraphRunDeps } from './graph-run.js';

/** Events the graph machine handles. */
export interface GraphMachineEvent {
  /** `step.settled` / `step.retry` / `step.iteration`, `engine.finished` or `engine.abort`. */
  type: string;
  /** Step events: the step's index. */
  step?: number;
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
}

/** The machine's context: the run's scheduler core (made by the root's `createRun` entry). */
export interface GraphContext {
  run: GraphRun | undefined;
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

/** The region of step `index`: pending → running ⇄ retrying → success | failed | skipped. */
function stepRegion(workflow: CompiledWorkflow, index: number): Record<string, unknown> {
  const step = workflow.steps[index]!;
  const when = workflow.document.steps[index]?.when;
  const name = step.name;
  const words = stepWords(workflow, index);
  const ready = {
    step: index,
    name,
    dependsOn: [...step.dependsOn],
    ...(when === undefined ? {} : { when: String(when) }),
  };
  // Only a step with tools has calls that can wait for approval; a human step waits for input.
  const approvals = step.tools.length > 0;
  const asks = step.kind === 'human';
  const pending: unknown[] = [
    {
      target: 'running',
      guard: { type: 'ready', params: ready },
      description:
        'The scheduler started it: its dependencies finished, its when: held, a slot was free.',
    },
  ];
  if (when !== undefined)
    pending.push({
      target: 'skipped',
      guard: { type: 'conditionFalse', params: { step: index, name, when: String(when) } },
      description: `Skipped: ${String(when)} was false.`,
    });
  pending.push(
    follow(index, name, 'skipped', 'Skipped: a dependency failed, or the run was aborted.'),
    follow(index, name, 'failed', 'Its when: or inputs could not be evaluated.'),
  );
  return {
    initial: 'pending',
    description: words.region,
    meta: {
      step: name,
      kind: step.kind,
      agent: step.agent,
      dependsOn: [...step.dependsOn],
      dependents: step.dependentsIndex.map((d) => workflow.steps[d]!.name),
      ...(when === undefined ? {} : { when: String(when) }),
    },
    states: {
      pending: { description: words.pending, always: pending },
      running: {
        description: words.running,
        always: [
          ...(approvals
            ? [
                follow(
                  index,
                  name,
                  'awaiting_approval',
                  'A high-risk tool call asked the approval gate.',
                ),
              ]
            : []),
          ...(asks
            ? [follow(index, name, 'awaiting_input', 'Its question was put to a person.')]
            : []),
          follow(index, name, 'retrying', 'The attempt failed with attempts left.'),
          follow(index, name, 'success', 'The attempt succeeded.'),
          follow(index, name, 'failed', 'The last attempt failed, or the run was aborted.'),
        ],
      },
      ...(approvals
        ? {
            awaiting_approval: {
              description: words.awaitingApproval,
              always: [
                follow(
                  index,
                  name,
                  'running',
                  'Approved, denied or timed out: the attempt goes on with the answer.',
                ),
                follow(index, name, 'failed', 'The run was cancelled or timed out while waiting.'),
              ],
            },
          }
        : {}),
      ...(asks
        ? {
            awaiting_input: {
              description: words.awaitingInput,
              always: [
                follow(index, name, 'success', 'Answered (or timed out with a default answer).'),
                follow(
                  index,
                  name,
                  'failed',
                  'Timed out, or the run was cancelled or timed out while waiting.',
                ),
                follow(index, name, 'running', 'The wait ended: the attempt settles.'),
              ],
            },
          }
        : {}),
      retrying: {
        description: words.retrying,
        always: [
          follow(index, name, 'running', 'The backoff delay elapsed: the next attempt runs.'),
          follow(index, name, 'failed', 'The run was aborted while waiting.'),
        ],
      },
      success: { type: 'final', description: words.success },
      failed: { type: 'final', description: words.failed },
      skipped: { type: 'final', description: words.skipped },
    },
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
        runOf(context).canRetry(event.step ?? 0, event.attempt ?? 0),
      ready: ({ context }: Args, params: StepParams) => {
        const now = status(context, params);
        return (
          now === 'running' ||
          now === 'retrying' ||
          now === 'awaiting_approval' ||
          now === 'awaiting_input'
        );
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
        runOf(context).succeed(event.step ?? -1, event.attempt, event.result);
      },
      scheduleRetry: ({ context, event }: Args) => {
        if (event.result === undefined || event.attempt === undefined) return;
        runOf(context).scheduleRetry(event.step ?? -1, event.attempt, event.result);
      },
      failStep: ({ context, event }: Args) => {
        if (event.result === undefined || event.attempt === undefined) return;
        runOf(context).fail(event.step ?? -1, event.attempt, event.result);
      },
      startNextAttempt: ({ context, event }: Args) => runOf(context).retry(event.step ?? -1),
      emitIteration: ({ context, event }: Args) => {
        if (event.attempt === undefined || event.iteration === undefined) return;
        runOf(context).iteration(
          event.step ?? -1,
          event.attempt,
          event.iteration,
          event.output ?? null,
        );
      },
      markApproval: ({ context, event }: Args) => {
        if (event.attempt === undefined) return;
        runOf(context).approval(event.step ?? -1, event.attempt, event.waiting === true);
      },
      abortRun: ({ context, event }: Args) => runOf(context).abort(event.reason ?? 'aborted'),
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
