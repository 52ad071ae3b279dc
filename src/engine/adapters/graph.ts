import {
  createGraphMachine,
  graphMachineConfig,
  graphMachineImplementations,
} from '../../../machines/graph.machine.js';
import { createGraphLogic, type GraphLogic } from '../../../machines/graph.logic.js';
import { isTruthy } from '../../workflow/values.js';
import type { CompiledWorkflow } from '../../workflow/types.js';
import type { EngineLogic } from '../../../machines/engine-contract.js';
import type { EngineAdapter } from '../adapter.js';

const DEPS = { isTruthy };

/**
 * The runtime logic of a workflow's graph machine (see `machines/graph.logic.ts`): what the graph
 * adapter executes. Its `machine` is the compiled XState machine. Compiles anew on every call;
 * a {@link GraphAdapter} keeps one per compiled workflow.
 */
export function compileGraphLogic(workflow: CompiledWorkflow): GraphLogic {
  const machine = createGraphMachine(workflow, DEPS);
  return createGraphLogic(
    machine,
    workflow.steps.map((step) => step.name),
    DEPS,
  );
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

/** The graph adapter of one runtime; `createLogic` and `compile` reuse one logic per workflow. */
export interface GraphAdapter extends EngineAdapter {
  /** The runtime logic of `workflow`, compiled on first use. */
  compile(workflow: CompiledWorkflow): GraphLogic;
}

/**
 * The graph adapter: the workflow compiled into an XState machine that runs it. Each runtime makes
 * its own, so the compiled machines belong to the runtime: one per compiled workflow object (the
 * runtime's registry caches those, so repeated runs of a workflow reuse them), held weakly.
 */
export function createGraphAdapter(): GraphAdapter {
  const logics = new WeakMap<CompiledWorkflow, GraphLogic>();
  const compile = (workflow: CompiledWorkflow): GraphLogic => {
    let logic = logics.get(workflow);
    if (logic === undefined) {
      logic = compileGraphLogic(workflow);
      logics.set(workflow, logic);
    }
    return logic;
  };
  return {
    name: 'graph',
    description:
      'Workflow compiled into an XState v5 machine: a parallel region per step (pending → running ⇄ retrying → success | failed | skipped), the shared scheduler core deciding what runs',
    compile,
    createLogic: (workflow): EngineLogic => compile(workflow),
  };
}
