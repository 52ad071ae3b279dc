/**
 * The model-call contract every LLM agent goes through. Providers (later: undici clients with a
 * tier router and fallback chains) and the no-LLM placeholder client implement it.
 */

/** One completion request. */
export interface LlmRequest {
  /** Model tier 1–5 (from the agent name `tierN_role`). */
  tier: number;
  /** A pinned model (step `model:`); the tier's default when absent. */
  model?: string;
  /** The system prompt (the role's persona). */
  system: string;
  /** The user prompt built from the step's inputs. */
  prompt: string;
  /** Output keys the step is expected to produce (declared or referenced by the workflow). */
  outputKeys?: readonly string[];
  /** Aborts the call (run cancellation, run timeout, step timeout). */
  signal: AbortSignal;
}

/** One completion. */
export interface LlmResponse {
  text: string;
  /** The model that actually answered. */
  model: string;
  tokensUsed: number;
  /** Structured fields parsed or produced alongside the text (merged into the step output). */
  fields?: Record<string, unknown>;
}

/** Something that completes prompts. Implementations reject on failure (a failed step). */
export interface LlmClient {
  complete(request: LlmRequest): Promise<LlmResponse>;
}
