import { randomUUID } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ApprovalProvider } from './approval.js';
import { ToolError } from './tool-error.js';
import { TOOL_RISKS, type ToolCallContext, type ToolDefinition } from './types.js';

/** Who is calling a tool, for the allowlist and the approval provider. */
export interface ToolCaller {
  workflow: string;
  step: string;
  runId: string;
  /** The step's `tools:` list: everything else is denied. */
  allowed: readonly string[];
}

/** The tools a runtime offers, and the one way to call them. */
export interface ToolRegistry {
  names(): string[];
  get(name: string): ToolDefinition | undefined;
  /**
   * Calls `name` for `caller`: refused unless the step lists it, arguments validated against
   * its schema, high-risk tools asked of the approval provider. Every refusal or failure
   * rejects with a {@link ToolError}.
   */
  call(name: string, args: unknown, caller: ToolCaller, context: ToolCallContext): Promise<unknown>;
}

export function createToolRegistry(
  tools: readonly ToolDefinition[],
  approval: ApprovalProvider,
): ToolRegistry {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const byName = new Map<string, { tool: ToolDefinition; validate: ValidateFunction }>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool ${tool.name}`);
    byName.set(tool.name, { tool, validate: ajv.compile(tool.parameters) });
  }
  return {
    names: () => [...byName.keys()].sort(),
    get: (name) => byName.get(name)?.tool,
    call: async (name, args, caller, context) => {
      const entry = byName.get(name);
      if (entry === undefined) throw new ToolError(name, 'no such tool');
      if (!caller.allowed.includes(name)) {
        throw new ToolError(name, `not allowed: step '${caller.step}' does not list it in tools`);
      }
      if (!entry.validate(args)) {
        const problems = (entry.validate.errors ?? [])
          .map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'invalid'}`)
          .join('; ');
        throw new ToolError(name, `invalid arguments: ${problems}`);
      }
      const valid = args as Record<string, unknown>;
      if (entry.tool.risk === TOOL_RISKS.HIGH) {
        const { allowed: _allowed, ...who } = caller;
        context.onApproval?.(true);
        let decision;
        try {
          decision = await approval.decide({
            callId: randomUUID(),
            toolName: name,
            args: valid,
            ...who,
            signal: context.signal,
          });
        } finally {
          context.onApproval?.(false);
        }
        if (!decision.approved) throw new ToolError(name, `denied: ${decision.reason}`, 'approval');
      }
      try {
        return await entry.tool.run(valid, context);
      } catch (error) {
        if (error instanceof ToolError) throw error;
        throw new ToolError(
          name,
          error instanceof Error ? error.message : 'failed',
          undefined,
          error,
        );
      }
    },
  };
}
