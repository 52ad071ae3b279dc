export type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  LlmAttemptOutcome,
  LlmCaller,
  LlmClient,
  LlmRequest,
  LlmResponse,
  Provider,
  TokenUsage,
  ToolCall,
  ToolDefinition,
} from './types.js';
export { addCost, addUsage } from './types.js';
export {
  callCostUsd,
  loadPriceTable,
  modelPrice,
  parsePriceTable,
  type ModelPrice,
  type PriceTable,
  type TokenRates,
} from './prices.js';
export { createNoLlmClient, PLACEHOLDER_MODEL } from './no-llm.js';
export { createUnconfiguredLlmClient, LLM_NOT_CONFIGURED_MESSAGE } from './unconfigured.js';
export { LLM_ERROR_KINDS, LlmError, type LlmErrorKind } from './llm-error.js';
export {
  createLlmRouter,
  LLM_VARIABLES_HINT,
  type LlmCallReport,
  type LlmRouter,
  type RouterOptions,
} from './router.js';
export { createLlmService, type LlmService, type LlmServiceOptions } from './llm-service.js';
export { probeProviders, type ProbeResult } from './probe.js';
export { createProviderSet, PROVIDER_NAMES, type ProviderSet } from './provider-set.js';
export {
  PROVIDER_DESCRIPTORS,
  PROVIDER_KINDS,
  type ProviderContext,
  type ProviderDescriptor,
  type ProviderKind,
  type ProviderName,
  type ProviderVariable,
} from './provider-descriptors.js';
export { LLM_TIERS, loadTierChains, type TierChains } from './model-chains.js';
export { parseModelId, type ModelRef } from './model-id.js';
export { createHttpClient, type HttpClient, type HttpTimeouts } from './http.js';
export { createOpenAiCompatibleProvider } from './providers/openai.js';
export { createAnthropicProvider } from './providers/anthropic.js';
export { createGeminiProvider } from './providers/gemini.js';
export { CircuitBreaker, BREAKER_STATES, type BreakerState } from './circuit-breaker.js';
