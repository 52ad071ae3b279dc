export type { Agent, AgentRequest, AgentResult } from './types.js';
export { createAgentSet, type AgentLookup, type AgentSetOptions } from './agent-set.js';
export { createLlmAgent, type LlmAgentOptions, type RoleProfile } from './llm-agent.js';
export { expectedOutputKeys } from './output-keys.js';
export {
  parseSource,
  SYNCHRONOUS_TIER0_AGENTS,
  TIER0_AGENT_IMPLEMENTATIONS,
  type ParsedSource,
} from './tier0/index.js';
