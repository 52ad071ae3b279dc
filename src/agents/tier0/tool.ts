import type { ToolKit } from '../../tools/index.js';
import type { Agent } from '../types.js';

/**
 * `tier0_tool`: calls one tool directly, `inputs: {tool, args}` → `{result}`. The tool must be
 * in the step's `tools:` list (deny by default); a refused or failed call fails the attempt
 * with the tool error's message.
 */
export function createToolAgent(workflow: string, toolkit: () => Promise<ToolKit>): Agent {
  return async (request) => {
    const tool = request.input.tool;
    if (typeof tool !== 'string' || tool.length === 0) {
      throw new Error('tier0_tool needs inputs.tool (a tool name)');
    }
    const args = request.input.args ?? {};
    const kit = await toolkit();
    const result = await kit.call(
      tool,
      args,
      { workflow, step: request.step.name, runId: request.runId, allowed: request.step.tools },
      request.signal,
      (waiting) => request.onApproval?.(waiting),
    );
    return { output: { result }, modelUsed: null, tokensUsed: null };
  };
}
