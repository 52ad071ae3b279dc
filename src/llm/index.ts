export type { LlmClient, LlmRequest, LlmResponse } from './types.js';
export { createNoLlmClient, PLACEHOLDER_MODEL } from './no-llm.js';
export { createUnconfiguredLlmClient, LLM_NOT_CONFIGURED_MESSAGE } from './unconfigured.js';
