import { createGraphMachine, type GraphMachine } from '../../../machines/graph-compiler.js';
import { isTruthy } from '../../workflow/values.js';
import type { CompiledWorkflow } from '../../workflow/types.js';
import type { EngineAdapter, EngineLogic } from '../adapter.js';

const DEPS = { isTruthy };

// One machine per compiled workflow object; the registry caches compiled workflows, so repeated
// runs of a workflow reuse its machine (and XState's per-node transition caches).
const machines = new WeakMap<CompiledWorkflow, GraphMachine>();

/**
 * Compiles a workflow into its graph machine: one state node per step, per-step event types,
 * guarded transitions, a counted join (see `machines/graph-compiler.ts`). This machine is what
 * the graph adapter executes.
 */
export function compileGraphMachine(workflow: CompiledWorkflow): GraphMachine {
  let machine = machines.get(workflow);
  if (machine === undefined) {
    machine = createGraphMachine(workflow, DEPS);
    machines.set(workflow, machine);
  }
  return machine;
}

/** The part of an XState state node that {@link addAlways} reads. */
interface NodeWithAlways {
  always?: readonly { toJSON(): unknown }[];
  states: Record<string, NodeWithAlways>;
}

/**
 * Adds each state node's eventless (`always`) transitions to its JSON, which XState's `toJSON`
 * leaves out (the graph machine's `running → completed` is one).
 */
function addAlways(node: NodeWithAlways, json: Record<string, unknown>): void {
  if (node.always !== undefined && node.always.length > 0) {
    json.always = node.always.map((transition) => transition.toJSON());
  }
  const states = json.states as Record<string, Record<string, unknown>> | undefined;
  for (const [key, child] of Object.entries(node.states)) {
    const childJson = states?.[key];
    if (childJson !== undefined) addAlways(child, childJson);
  }
}

/**
 * The compiled machine's definition as plain JSON (`machine.toJSON()`, plus the eventless
 * transitions it omits), for `GET /api/workflows/{name}/machine` and visualizers.
 */
export function graphMachineDefinition(workflow: CompiledWorkflow): Record<string, unknown> {
  const machine = compileGraphMachine(workflow);
  const json = machine.toJSON() as unknown as Record<string, unknown>;
  addAlways(machine.root, json);
  return JSON.parse(JSON.stringify(json)) as Record<string, unknown>;
}

/** The graph adapter: the workflow compiled into an XState machine that runs it. */
export const graphAdapter: EngineAdapter = {
  name: 'graph',
  description:
    'Workflow compiled into an XState v5 machine: one state per step, guarded per-step transitions, counted join',
  // The machine also emits `engine.batch` (several engine events of one transition), which the
  // run's engine dispatch unpacks (`forEachEngineEvent`); EngineLogic's emitted type names only
  // the individual events its observers receive.
  createLogic: (workflow): EngineLogic => compileGraphMachine(workflow) as unknown as EngineLogic,
};
