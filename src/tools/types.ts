import type { MemoryStore } from '../memory/index.js';

/** How dangerous a tool is; `high` tools need an approval (spec, Safety controls 4). */
export const TOOL_RISKS = { LOW: 'low', HIGH: 'high' } as const;
export type ToolRisk = (typeof TOOL_RISKS)[keyof typeof TOOL_RISKS];

/** What one tool call is made with, besides its arguments. */
export interface ToolCallContext {
  /** Aborted on cancellation or timeout; tools pass it to every I/O call. */
  signal: AbortSignal;
  /** The memory of the calling workflow (its own namespace, or the shared one on request). */
  memory: (shared: boolean) => MemoryStore;
  /** Told when the call starts (`true`) and stops (`false`) waiting for the approval gate. */
  onApproval?: (waiting: boolean) => void;
}

/** A typed tool: its arguments are described by a JSON Schema and validated before `run`. */
export interface ToolDefinition<Args = Record<string, unknown>> {
  name: string;
  description: string;
  risk: ToolRisk;
  /** JSON Schema (draft 2020-12) of the arguments object. */
  parameters: Record<string, unknown>;
  /**
   * Refuses, with the {@link ToolError} `run` would throw, arguments the tool is sure to refuse
   * (a path out of the base directory, a command not allowed, a blocked address), without doing
   * anything. The registry calls it after the schema and before the approval gate, so nobody is
   * asked to approve a call that cannot run; `run` still checks everything itself.
   * @default none: only the schema is checked before approval
   */
  check?(args: Args): void | Promise<void>;
  run(args: Args, context: ToolCallContext): Promise<unknown>;
}
