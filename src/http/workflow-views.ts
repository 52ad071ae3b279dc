/**
 * Pure views of a compiled workflow for the catalogue endpoints: the DAG (spec endpoint 8) and
 * the capabilities map (endpoint 9).
 */
import type { CapabilitiesResponse } from '../generated/api/capabilities-response.js';
import type { DagResponse, InputDescriptor } from '../generated/api/dag-response.js';
import type { CompiledWorkflow } from '../workflow/index.js';

export function toDag(workflow: CompiledWorkflow): DagResponse {
  const nodes = workflow.steps.map((step) => ({
    id: step.name,
    agent: step.agent,
    kind: step.kind,
    description: step.description,
    depends_on: [...step.dependsOn],
    // A string, as in GET /api/agents: clients render `{tier && …}`, and a numeric 0 prints "0".
    tier: String(step.tier),
  }));
  const edges = workflow.steps.flatMap((step) =>
    step.dependsOn.map((source) => ({ source, target: step.name })),
  );
  const inputs = Object.entries(workflow.inputs).map(([name, spec]) => ({
    name,
    type: spec.type,
    description: spec.description ?? '',
    default: (spec.default ?? null) as InputDescriptor['default'],
    required: spec.required === true,
    enum: spec.enum ?? null,
  }));
  return { name: workflow.name, description: workflow.description, nodes, edges, inputs };
}

export function toCapabilities(workflow: CompiledWorkflow): CapabilitiesResponse {
  const inputs: CapabilitiesResponse['capabilities']['inputs'] = {};
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    inputs[name] = {
      type: spec.type,
      ...(spec.description ? { description: spec.description } : {}),
    };
  }
  const outputs: CapabilitiesResponse['capabilities']['outputs'] = {};
  for (const name of workflow.outputNames) {
    outputs[name] = {
      type: 'any',
      ...(workflow.optionalOutputs.includes(name) ? { optional: true } : {}),
    };
  }
  return { workflow: workflow.name, capabilities: { inputs, outputs } };
}
