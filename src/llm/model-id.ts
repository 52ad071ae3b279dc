/** Model ids are `provider:model` (`openai:gpt-4.1-mini`, `ollama:qwen2.5:7b`). */
export interface ModelRef {
  provider: string;
  model: string;
}

const MODEL_ID = /^([a-z][a-z0-9_-]*):(\S+)$/;

/**
 * A model id as a person may write it (`provider:model` or a bare name, resolved by
 * model-resolver.ts): no whitespace, not starting or ending with a colon. The same pattern is
 * the `model` of `schemas/api/chat-request.schema.json` and of a workflow step.
 */
export const WRITTEN_MODEL_ID = /^[^\s:](\S*[^\s:])?$/;

/** Whether a provider's model list names `model`; a bare Ollama name means its `:latest` tag. */
export function listsModel(models: readonly string[] | undefined, model: string): boolean {
  if (models === undefined) return false;
  return models.includes(model) || (!model.includes(':') && models.includes(`${model}:latest`));
}

/** Splits at the first colon (Ollama model names contain colons); undefined when malformed. */
export function parseModelId(id: string): ModelRef | undefined {
  const match = MODEL_ID.exec(id.trim());
  if (match === null) return undefined;
  return { provider: match[1] ?? '', model: match[2] ?? '' };
}
