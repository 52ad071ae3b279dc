import { createGraphMachine, type GraphMachine } from '../../../machines/graph-compiler.js';
import { isTruthy } from '../../workflow/values.js';
import type { CompiledWorkflow } from '../../workflow/types.js';
import { asEngineLogic, type EngineAdapter, type EngineLogic } from '../adapter.js';

const DEPS = { isTruthy };

// One machine per compiled workflow object; the registry caches compiled workflows, so repeated
// runs of a workflow reuse its machine (and XState's per-node transition caches).
const machines = new WeakMap<CompiledWorkflow, GraphMachine>();

/**
 * Compiles a workflow into its graph machine: per-step event types selecting per-step guarded
 * transitions, a counted join (see `machines/graph-compiler.ts`). This machine is what
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

/**
 * The compiled machine's definition as plain JSON (`machine.toJSON()`), for
 * `GET /api/workflows/{name}/machine` and visualizers.
 */
export function graphMachineDefinition(workflow: CompiledWorkflow): Record<string, unknown> {
  return JSON.parse(JSON.stringify(compileGraphMachine(workflow).toJSON())) as Record<
    string,
    unknown
  >;
}

/** The graph adapter: the workflow compiled into an XState machine that runs it. */
export const graphAdapter: EngineAdapter = {
  name: 'graph',
  description:
    'Workflow compiled into an XState v5 machine: guarded per-step transitions (per-step event types), counted join',
  createLogic: (workflow): EngineLogic => asEngineLogic(compileGraphMachine(workflow)),
};
