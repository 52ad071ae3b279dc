import type { AgentMessage } from '../generated/run-record.js';
import type { TokenUsage } from '../llm/types.js';
import type { CompiledStep } from '../workflow/types.js';

/** What an agent is called with for one attempt (or one loop iteration) of a step. */
export interface AgentRequest {
  step: CompiledStep;
  /** The step's resolved `inputs` map. */
  input: Record<string, unknown>;
  /** Aborted on cancellation, run timeout or step timeout; agents pass it to every I/O call. */
  signal: AbortSignal;
  runId: string;
  /** Streams a chunk of the step's model output to `token_delta` events (optional for callers). */
  emitDelta?(text: string): void;
  /**
   * Told when a tool call of this step starts (`true`) and stops (`false`) waiting for the
   * approval gate: the graph machine shows the step `awaiting_approval` meanwhile.
   */
  onApproval?(waiting: boolean): void;
}

/** What an agent produces. */
export interface AgentResult {
  output: Record<string, unknown>;
  /** The model that answered; null for deterministic agents. */
  modelUsed: string | null;
  /** Tokens of the model calls (`{input, output, total}`); null for deterministic agents. */
  tokensUsed: TokenUsage | null;
  /** The step's `tool_call` / `tool_result` messages (LLM steps with tools). */
  messages?: AgentMessage[];
}

/** An agent: rejects (or throws) to fail the attempt. */
export type Agent = (request: AgentRequest) => Promise<AgentResult>;

/**
 * An agent failure that carries the messages exchanged before it (a tool loop that failed after
 * some calls): the step record keeps them.
 */
export class AgentFailure extends Error {
  readonly messages: AgentMessage[];
  readonly tokensUsed: TokenUsage | null;
  readonly modelUsed: string | null;
  constructor(
    message: string,
    detail: { messages: AgentMessage[]; tokensUsed: TokenUsage | null; modelUsed: string | null },
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AgentFailure';
    this.messages = detail.messages;
    this.tokensUsed = detail.tokensUsed;
    this.modelUsed = detail.modelUsed;
  }
}
