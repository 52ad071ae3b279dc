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
}

/** What an agent produces. */
export interface AgentResult {
  output: Record<string, unknown>;
  /** The model that answered; null for deterministic agents. */
  modelUsed: string | null;
  /** Tokens of the model calls (`{input, output, total}`); null for deterministic agents. */
  tokensUsed: TokenUsage | null;
}

/** An agent: rejects (or throws) to fail the attempt. */
export type Agent = (request: AgentRequest) => Promise<AgentResult>;
