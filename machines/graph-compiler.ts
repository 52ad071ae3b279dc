/**
 * The graph engine: compiles a workflow into an XState v5 machine with one state node per step.
 *
 * Shape (every state has a `description`, readable in the inspector and the Stately visualizer):
 *
 * ```
 * graph_<workflow>
 *   running              steps run; the active child is the step whose attempt settled last
 *     starting           nothing has settled yet
 *     <step> …           one node per step; meta lists dependsOn, dependents, when
 *   completed (final)    every step finished
 *   aborted   (final)    engine.abort: running steps failed, the rest skipped
 * ```
 *
 * Transitions are generated per step and selected by event type, so a step event costs one map
 * lookup, never a scan of the other steps: `step.<step>.settled` → `<step>` guarded by
 * `attemptSucceeded` (action `completeStep`: outputs mapping, then the join — each dependent's
 * counter of unfinished dependencies goes down, a dependent at zero is ready, its `when:` is
 * evaluated when it starts), by `retryAllowed` (`scheduleRetry`), else `failStep` (transitive
 * dependents skipped); `step.<step>.retry` → `<step>` (`startNextAttempt`); `engine.abort` →
 * `aborted`; `running` → `completed` by an `always` transition guarded by `allFinished` (one guard
 * call per microstep: XState looks for eventless transitions after every microstep anyway).
 * The step actions are plain actions; each transition then lists the shared `emitEvents`, which
 * emits the transition's engine events as one event (the event itself, or an `engine.batch` of
 * them in order, unpacked by the engine dispatch: observers see the individual events).
 *
 * Why not a parallel region per step: XState offers every event to every active region and
 * rebuilds the state value from the whole configuration on each microstep, about 1 µs per region
 * per event here, so fan-out-1000 would cost O(n) per event and O(n²) per run. With a single
 * active step node the cost per event does not depend on the workflow's size. The counters,
 * outcomes and the ready heap live in {@link GraphRun} (in context), changed in O(1) per event.
 * `maxConcurrency` is respected (ready steps start in YAML order, as in the native engine).
 *
 * Pure: imports xstate and types only; truthiness comes in through {@link GraphRunDeps}.
 */
import { emit, enqueueActions, setup, type AnyActorRef } from 'xstate';
import type {
  AttemptResult,
  EngineEmitted,
  EngineInput,
  EngineOutput,
} from '../src/engine/adapter.js';
import type { CompiledWorkflow } from '../src/workflow/types.js';
import { GraphRun, stepEventTypes, type GraphRunDeps } from './graph-run.js';

export { GraphRun, SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './graph-run.js';
export type { GraphRunDeps } from './graph-run.js';

/** Events the graph machine handles. `<key>` is the step's node key. */
export interface GraphMachineEvent {
  /** `engine.abort`, or `step.<key>.settled` / `.retry` / `.iteration`. */
  type: string;
  /** `engine.abort`: why (running steps fail with it). */
  reason?: string;
  /** `settled` / `iteration`: the attempt it belongs to. */
  attempt?: number;
  /** `settled`: the attempt's result. */
  result?: AttemptResult;
  /** `iteration`: the loop iteration that finished, and its output. */
  iteration?: number;
  output?: Record<string, unknown> | null;
}

interface GraphContext {
  run: GraphRun;
}

/** Parameters of the per-step guards and actions (visible in the machine's JSON). */
interface StepParams {
  step: number;
  name: string;
}

/** Child key of `running` that is not a step. */
const START_KEY = 'starting';
const SAFE_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Node keys for the steps: the step name when it is a safe key (no `.`, which XState reads as a
 * path separator), else `step-<index>`; never the reserved `starting`.
 */
export function graphStepKeys(workflow: Pick<CompiledWorkflow, 'steps'>): string[] {
  const used = new Set<string>([START_KEY]);
  return workflow.steps.map((step) => {
    let key = SAFE_KEY.test(step.name) && !used.has(step.name) ? step.name : `step-${step.index}`;
    while (used.has(key)) key = `${key}_`;
    used.add(key);
    return key;
  });
}

function machineId(name: string): string {
  return `graph_${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * Disposes the run (retry timers, in-flight attempts) when its actor completes: done, or stopped
 * mid-run. An observer of the engine actor rather than an invoked cleanup actor: about 1.5 KB
 * less per run. The run is the observer itself (its `complete` method): an observer literal's
 * `complete` arrow would be a per-run closure whose name tsx's keepNames redefines, which turns
 * it and XState's bound copy into dictionary-mode objects (about 0.6 KB per run).
 */
function startRun(run: GraphRun, self: AnyActorRef): GraphRun {
  self.subscribe(run);
  return run;
}

function stepDescription(workflow: CompiledWorkflow, index: number): string {
  const step = workflow.steps[index]!;
  const when = workflow.document.steps[index]?.when;
  const parts = [
    `Step "${step.name}" (agent ${step.agent})${step.description ? `: ${step.description}` : ''}.`,
  ];
  parts.push(
    step.dependsOn.length === 0
      ? 'No dependencies: starts when the run starts.'
      : `Join: starts once ${step.dependsOn.join(', ')} ${step.dependsOn.length === 1 ? 'has' : 'have all'} finished; a failed dependency skips it.`,
  );
  if (when !== undefined)
    parts.push(`Runs only when ${when} holds, else skipped (condition false).`);
  parts.push(
    'Active while this step is the last whose attempt settled (succeeded, failed or retrying).',
  );
  return parts.join(' ');
}

/** Builds the machine for one workflow. */
export function createGraphMachine(workflow: CompiledWorkflow, deps: GraphRunDeps) {
  const keys = graphStepKeys(workflow);
  const types = stepEventTypes(keys);
  const stepStates: Record<string, { description: string; meta: Record<string, unknown> }> = {};
  const on: Record<string, unknown> = {};
  workflow.steps.forEach((step, index) => {
    const key = keys[index]!;
    const params: StepParams = { step: index, name: step.name };
    const when = workflow.document.steps[index]?.when;
    stepStates[key] = {
      description: stepDescription(workflow, index),
      meta: {
        step: step.name,
        agent: step.agent,
        dependsOn: [...step.dependsOn],
        dependents: step.dependentsIndex.map((d) => workflow.steps[d]!.name),
        ...(when === undefined ? {} : { when }),
      },
    };
    on[types.settled[index]!] = [
      {
        guard: { type: 'attemptSucceeded' },
        target: `.${key}`,
        actions: [{ type: 'completeStep', params }, 'emitEvents'],
      },
      {
        guard: { type: 'retryAllowed', params },
        target: `.${key}`,
        actions: [{ type: 'scheduleRetry', params }, 'emitEvents'],
      },
      { target: `.${key}`, actions: [{ type: 'failStep', params }, 'emitEvents'] },
    ];
    on[types.retry[index]!] = {
      target: `.${key}`,
      actions: [{ type: 'startNextAttempt', params }, 'emitEvents'],
    };
    if (step.loopUntil !== undefined) {
      on[types.iteration[index]!] = {
        actions: [{ type: 'emitIteration', params }, 'emitEvents'],
      };
    }
  });
  on['engine.abort'] = { target: 'aborted', actions: ['abortRun', 'emitEvents'] };

  const graphSetup = setup({
    types: {
      context: {} as GraphContext,
      input: {} as EngineInput,
      output: {} as EngineOutput,
      events: {} as GraphMachineEvent,
      emitted: {} as EngineEmitted,
    },
    guards: {
      attemptSucceeded: ({ event }) => event.result?.ok === true,
      retryAllowed: ({ context, event }, params: StepParams) =>
        context.run.canRetry(params.step, event.attempt ?? 0),
      allFinished: ({ context }) => context.run.allFinished,
    },
    actions: {
      // The one emit action each transition lists after its step action: it emits the run's
      // pending engine events as one event (the event itself, or an `engine.batch` of them in
      // order; the run actor's engine dispatch unpacks batches).
      emitEvents: emit(({ context }) => context.run.takeEmitted()),
      // Entry of the initial state: XState defers custom actions until the actor starts but
      // resolves emit actions at once, so begin() runs in enqueueActions' collect (once per run).
      startReadySteps: enqueueActions(({ context, enqueue }) => {
        context.run.begin();
        enqueue.emit(context.run.takeEmitted());
      }),
      // Plain actions (no enqueueActions wrapper per step event); each transition lists
      // `emitEvents` after them.
      completeStep: ({ context, event }, params: StepParams) => {
        if (event.result === undefined || event.attempt === undefined) return;
        context.run.succeed(params.step, event.attempt, event.result);
      },
      scheduleRetry: ({ context, event }, params: StepParams) => {
        if (event.result === undefined || event.attempt === undefined) return;
        context.run.scheduleRetry(params.step, event.attempt, event.result);
      },
      failStep: ({ context, event }, params: StepParams) => {
        if (event.result === undefined || event.attempt === undefined) return;
        context.run.fail(params.step, event.attempt, event.result);
      },
      startNextAttempt: ({ context }, params: StepParams) => {
        context.run.retry(params.step);
      },
      emitIteration: ({ context, event }, params: StepParams) => {
        if (event.attempt === undefined || event.iteration === undefined) return;
        context.run.iteration(params.step, event.attempt, event.iteration, event.output ?? null);
      },
      abortRun: ({ context, event }) => {
        context.run.abort(event.reason ?? 'aborted');
      },
    },
  });

  return graphSetup.createMachine({
    id: machineId(workflow.name),
    description: `Graph engine for workflow "${workflow.name}": one state per step; per-step events; a step starts when every dependency has finished and its when: holds.`,
    context: ({ input, self }) => ({ run: startRun(new GraphRun(input, self, types, deps), self) }),
    initial: 'running',
    states: {
      running: {
        description:
          'Steps are running (at most maxConcurrency at once, ready steps in YAML order). The active child is the step whose attempt settled last.',
        entry: 'startReadySteps',
        // Checked after each microstep: one guard call (XState looks for eventless transitions
        // after every microstep anyway).
        always: { guard: { type: 'allFinished' }, target: 'completed' },
        initial: START_KEY,
        states: {
          [START_KEY]: {
            description: 'No attempt has settled yet; the steps without dependencies have started.',
          },
          ...stepStates,
        },
        // Generated per step (see above); typed loosely because keys are computed.
        on: on as never,
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
    output: ({ context }) => context.run.output(),
  });
}

/** The compiled machine's type. */
export type GraphMachine = ReturnType<typeof createGraphMachine>;
