/**
 * The graph engine: compiles a workflow into an XState v5 machine whose transitions are the
 * workflow's steps.
 *
 * Shape (every state and every step transition has a `description`, readable in the inspector
 * and the Stately visualizer; each step's transitions carry `meta`: step, agent, dependsOn,
 * dependents, when):
 *
 * ```
 * graph_<workflow>
 *   running              steps run; one set of guarded transitions per step:
 *                          step.<step>.settled    attemptSucceeded → completeStep
 *                                                 retryAllowed     → scheduleRetry
 *                                                 otherwise        → failStep
 *                          step.<step>.retry      → startNextAttempt   (retry delay elapsed)
 *                          step.<step>.iteration  → emitIteration      (loop steps only)
 *                          engine.finished        → completed
 *                          engine.abort           → aborted
 *   completed (final)    every step finished
 *   aborted   (final)    engine.abort: running steps failed, the rest skipped
 * ```
 *
 * Transitions are generated per step and selected by event type, so a step event costs one map
 * lookup, never a scan of the other steps. `completeStep` maps the outputs, then does the join:
 * each dependent's counter of unfinished dependencies goes down, a dependent at zero is ready,
 * and its `when:` is evaluated when it starts (false → skipped, condition false). `failStep`
 * skips the step's transitive dependents. Each transition then lists the shared `emitEvents`,
 * which emits the transition's engine events as one event (the event itself, or an
 * `engine.batch` of them in order, unpacked by the engine dispatch: observers see the individual
 * events). When the last step finishes, the run sends the machine `engine.finished` (once).
 *
 * Why the step transitions have no target (the state stays `running` while steps run; the
 * steps' progress is the context, whose JSON lists each step's status):
 * - a parallel region per step costs O(n) per event: XState offers every event to every active
 *   region and rebuilds the state value from the whole configuration (~1 µs per region per
 *   event here, so O(n²) per run for fan-out-1000);
 * - a child node per step entered on each event (an earlier version: "the active child is the
 *   step that settled last") cost ~1.5 µs more per step (exit, entry, a new snapshot and state
 *   value), and XState memoizes transition candidates per (active node, event type) pair on the
 *   machine, which grew without bound for wide workflows (O(n²) pairs per cached machine:
 *   +1.2 MiB per 40 runs of fan-out-1000 with varied completion order).
 * The counters, outcomes and the ready heap live in {@link GraphRun} (in context), changed in
 * O(1) or O(log n) per event. `maxConcurrency` is respected (ready steps start in YAML order, as
 * in the native engine).
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
import { GraphRun, stepEventTypes, type GraphRunDeps, type StepEventTypes } from './graph-run.js';

export { GraphRun, SKIP_CONDITION_FALSE, SKIP_UNMET_DEPENDENCIES } from './graph-run.js';
export type { GraphRunDeps } from './graph-run.js';

/** Events the graph machine handles. `<key>` is the step's name. */
export interface GraphMachineEvent {
  /** `engine.abort`, `engine.finished`, or `step.<key>.settled` / `.retry` / `.iteration`. */
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

/** What a step's transitions say about it: the step, its join and its `when:`. */
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
  return parts.join(' ');
}

/** The `meta` of a step's transitions (what visualizers and the machine JSON show). */
function stepMeta(workflow: CompiledWorkflow, index: number): Record<string, unknown> {
  const step = workflow.steps[index]!;
  const when = workflow.document.steps[index]?.when;
  return {
    step: step.name,
    agent: step.agent,
    dependsOn: [...step.dependsOn],
    dependents: step.dependentsIndex.map((d) => workflow.steps[d]!.name),
    ...(when === undefined ? {} : { when }),
  };
}

/** The per-step transitions of `running`, keyed by event type. */
function stepTransitions(
  workflow: CompiledWorkflow,
  types: StepEventTypes,
): Record<string, unknown> {
  const on: Record<string, unknown> = {};
  workflow.steps.forEach((step, index) => {
    const params: StepParams = { step: index, name: step.name };
    const about = stepDescription(workflow, index);
    const meta = stepMeta(workflow, index);
    on[types.settled[index]!] = [
      {
        guard: { type: 'attemptSucceeded' },
        actions: [{ type: 'completeStep', params }, 'emitEvents'],
        description: `${about} Succeeded: outputs mapped, then each dependent whose dependencies have all finished is ready.`,
        meta,
      },
      {
        guard: { type: 'retryAllowed', params },
        actions: [{ type: 'scheduleRetry', params }, 'emitEvents'],
        description: `Step "${step.name}" failed with attempts left: retrying, the next attempt after the backoff delay.`,
        meta,
      },
      {
        actions: [{ type: 'failStep', params }, 'emitEvents'],
        description: `Step "${step.name}" failed on its last attempt: its transitive dependents are skipped.`,
        meta,
      },
    ];
    on[types.retry[index]!] = {
      actions: [{ type: 'startNextAttempt', params }, 'emitEvents'],
      description: `Step "${step.name}": the retry delay elapsed, the next attempt starts.`,
      meta,
    };
    if (step.loopUntil !== undefined) {
      on[types.iteration[index]!] = {
        actions: [{ type: 'emitIteration', params }, 'emitEvents'],
        description: `Loop step "${step.name}": an iteration finished (loop_until not yet true).`,
        meta,
      };
    }
  });
  return on;
}

/** Builds the machine for one workflow. */
export function createGraphMachine(workflow: CompiledWorkflow, deps: GraphRunDeps) {
  // Step names are validated as `[A-Za-z0-9_-]+` and unique, so they are safe event-type keys.
  const types = stepEventTypes(workflow.steps.map((step) => step.name));
  const on = stepTransitions(workflow, types);
  on['engine.finished'] = {
    target: 'completed',
    description: 'The last step finished (the run sends this once).',
  };
  on['engine.abort'] = {
    target: 'aborted',
    actions: ['abortRun', 'emitEvents'],
    description: 'Cancel or run timeout: running steps fail with the reason, the rest are skipped.',
  };

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
    description: `Graph engine for workflow "${workflow.name}": per-step guarded transitions; a step starts when every dependency has finished and its when: holds.`,
    context: ({ input, self }) => ({ run: startRun(new GraphRun(input, self, types, deps), self) }),
    initial: 'running',
    states: {
      running: {
        description:
          "Steps are running (at most maxConcurrency at once, ready steps in YAML order). Each step has its own guarded transitions (step.<step>.settled / .retry / .iteration); the context lists every step's status.",
        entry: 'startReadySteps',
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
