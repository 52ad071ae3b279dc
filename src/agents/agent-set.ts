import type { LlmClient } from '../llm/types.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import { isTier0Agent, parseAgentName } from './agent-names.js';
import { createLlmAgent, type RoleProfile } from './llm-agent.js';
import { expectedOutputKeys } from './output-keys.js';
import { TIER0_AGENT_IMPLEMENTATIONS } from './tier0/index.js';
import type { Agent } from './types.js';

export interface AgentSetOptions {
  llm: LlmClient;
  profile: (role: string) => RoleProfile | undefined;
  /** Agents by full name; they take precedence over the built-in ones (tests, embedding). */
  extra?: Readonly<Record<string, Agent>>;
}

/** Looks an agent up by its name (`tier0_echo`, `tier2_reviewer`, ...). */
export type AgentLookup = (agent: string) => Agent | undefined;

/**
 * The agents one workflow's steps resolve to: extra agents first, then the tier-0 agents, then
 * one LLM agent for every `tier{1-5}_{role}` name.
 */
export function createAgentSet(workflow: CompiledWorkflow, options: AgentSetOptions): AgentLookup {
  const keys = expectedOutputKeys(workflow);
  const llmAgent = createLlmAgent({
    llm: options.llm,
    profile: options.profile,
    outputKeys: (stepName) => keys.get(stepName) ?? [],
  });
  const extra = options.extra ?? {};
  return (agent) => {
    if (Object.hasOwn(extra, agent)) return extra[agent];
    if (isTier0Agent(agent)) return TIER0_AGENT_IMPLEMENTATIONS[agent];
    const parsed = parseAgentName(agent);
    return parsed !== undefined && parsed.tier > 0 ? llmAgent : undefined;
  };
}
