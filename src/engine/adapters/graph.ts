import {
  createGraphMachine,
  graphMachineConfig,
  graphMachineImplementations,
  type GraphMachine,
} from '../../../machines/graph.machine.js';
import { createGraphLogic, type GraphLogic } from '../../../machines/graph.logic.js';
import { isTruthy } from '../../workflow/values.js';
import type { CompiledWorkflow } from '../../workflow/types.js';
import type { EngineLogic } from '../../../machines/engine-contract.js';
import type { EngineAdapter } from '../adapter.js';

const DEPS = { isTruthy };

// One machine and logic per compiled workflow object; the registry caches compiled workflows, so
// repeated runs of a workflow reuse them.
const logics = new WeakMap<CompiledWorkflow, GraphLogic>();

/**
 * The runtime logic of a workflow's graph machine (see `machines/graph.logic.ts`): what the graph
 * adapter executes. Its `machine` is the compiled XState machine.
 */
export function compileGraphLogic(workflow: CompiledWorkflow): GraphLogic {
  let logic = logics.get(workflow);
  if (logic === undefined) {
    const machine = createGraphMachine(workflow, DEPS);
    logic = createGraphLogic(
      machine,
      workflow.steps.map((step) => step.name),
      DEPS,
    );
    logics.set(workflow, logic);
  }
  return logic;
}

/**
 * Compiles a workflow into its graph machine: a parallel region per step (see
 * `machines/graph.machine.ts`).
 */
export function compileGraphMachine(workflow: CompiledWorkflow): GraphMachine {
  return compileGraphLogic(workflow).machine;
}

/** The guards and actions the machine's JSON references, for `createMachine(json).provide(…)`. */
export function graphImplementations() {
  return graphMachineImplementations(DEPS);
}

/**
 * The compiled machine's config as plain JSON, for `GET /api/workflows/{name}/machine` and
 * visualizers: `createMachine(json).provide(graphImplementations())` loads and runs it.
 */
export function graphMachineDefinition(workflow: CompiledWorkflow): Record<string, unknown> {
  return JSON.parse(JSON.stringify(graphMachineConfig(workflow))) as Record<string, unknown>;
}

/** The graph adapter: the workflow compiled into an XState machine that runs it. */
export const graphAdapter: EngineAdapter = {
  name: 'graph',
  description:
    'Workflow compiled into an XState v5 machine: a parallel region per step (pending → running ⇄ retrying → success | failed | skipped), the shared scheduler core deciding what runs',
  createLogic: (workflow): EngineLogic => compileGraphLogic(workflow),
};
