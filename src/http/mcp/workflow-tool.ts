/**
 * A workflow as an MCP tool (docs/mcp.md): its name, its description, its inputs as the
 * `inputSchema` (JSON Schema from their types, enums, defaults, required) and its declared
 * outputs as the `outputSchema` of the `structuredContent` a call answers with.
 */
import type { CompiledWorkflow } from '../../workflow/index.js';

/** The tool as `tools/list` lists it (the MCP `Tool` shape). */
export interface WorkflowToolDefinition {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
}

/**
 * Workflow names are file stems, `[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}` (workflow-files.ts): every
 * one is already a valid MCP tool name (1–128 of `A-Za-z0-9_-.`), so the tool name is the
 * workflow name, unchanged, and a call names the workflow directly.
 */
export function toolNameOf(workflowName: string): string {
  return workflowName;
}

export function toolOf(workflow: CompiledWorkflow): WorkflowToolDefinition {
  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    properties[name] = {
      type: spec.type,
      ...(spec.description === undefined ? {} : { description: spec.description }),
      ...(spec.default === undefined ? {} : { default: spec.default }),
      ...(spec.enum === undefined ? {} : { enum: spec.enum }),
    };
    if (spec.required === true) required.push(name);
  }
  // The runtime refuses inputs the workflow does not declare (422), so the schema says so too.
  const inputSchema = {
    type: 'object' as const,
    properties,
    ...(required.length === 0 ? {} : { required }),
    additionalProperties: false,
  };
  const tool: WorkflowToolDefinition = {
    name: toolNameOf(workflow.name),
    description: workflow.description,
    inputSchema,
  };
  if (workflow.outputNames.length > 0) {
    const declared = workflow.document.outputs ?? {};
    const outputs: Record<string, Record<string, unknown>> = {};
    for (const name of workflow.outputNames) {
      const description = (declared[name] as { description?: unknown } | undefined)?.description;
      // Outputs are untyped in the workflow format: any JSON value, described.
      outputs[name] = typeof description === 'string' ? { description } : {};
    }
    const mandatory = workflow.outputNames.filter((n) => !workflow.optionalOutputs.includes(n));
    tool.outputSchema = {
      type: 'object',
      properties: outputs,
      ...(mandatory.length === 0 ? {} : { required: mandatory }),
    };
  }
  return tool;
}
