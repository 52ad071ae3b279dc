import type { LlmClient } from '../llm/types.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import { isTier0Agent, parseAgentName } from '../workflow/agent-names.js';
import type { AgentLoopLimits } from './agent-loop.js';
import { createLlmAgent, type RoleProfile } from './llm-agent.js';
import { expectedOutputKeys } from './output-keys.js';
import type { ToolKit } from '../tools/index.js';
import { createToolAgent, TIER0_AGENT_IMPLEMENTATIONS } from './tier0/index.js';
import type { Agent } from './types.js';

export interface AgentSetOptions {
  llm: LlmClient;
  profile: (role: string) => RoleProfile | undefined;
  /** Agents by full name; they take precedence over the built-in ones (tests, embedding). */
  extra?: Readonly<Record<string, Agent>>;
  /** The runtime's tools, for `tier0_tool` and LLM steps with `tools:`; without them every tool call is refused. */
  tools?: () => Promise<ToolKit>;
  /** Bounds of LLM steps' agent loop. @default DEFAULT_AGENT_LOOP_LIMITS */
  loopLimits?: AgentLoopLimits;
}

/** Looks an agent up by its name (`tier0_echo`, `tier2_reviewer`, ...). */
export type AgentLookup = (agent: string) => Agent | undefined;

/**
 * The agents one workflow's steps resolve to: extra agents first, then the tier-0 agents, then
 * one LLM agent for every `tier{1-5}_{role}` name.
 */
export function createAgentSet(workflow: CompiledWorkflow, options: AgentSetOptions): AgentLookup {
  const extra = options.extra ?? {};
  // Made on the first LLM step: a tier-0 run (most runs of large workflows) never needs it.
  let llmAgent: Agent | undefined;
  let toolAgent: Agent | undefined;
  return (agent) => {
    if (Object.hasOwn(extra, agent)) return extra[agent];
    if (agent === 'tier0_tool') {
      return (toolAgent ??= createToolAgent(workflow.name, options.tools ?? noTools));
    }
    if (isTier0Agent(agent))
      return TIER0_AGENT_IMPLEMENTATIONS[agent as Exclude<typeof agent, 'tier0_tool'>];
    const parsed = parseAgentName(agent);
    if (parsed === undefined || parsed.tier <= 0) return undefined;
    return (llmAgent ??= createWorkflowLlmAgent(workflow, options));
  };
}

function createWorkflowLlmAgent(workflow: CompiledWorkflow, options: AgentSetOptions): Agent {
  const keys = expectedOutputKeys(workflow);
  return createLlmAgent({
    llm: options.llm,
    profile: options.profile,
    outputKeys: (stepName) => keys.get(stepName) ?? [],
    workflow: workflow.name,
    ...(options.tools === undefined ? {} : { tools: options.tools }),
    ...(options.loopLimits === undefined ? {} : { loopLimits: options.loopLimits }),
  });
}

function noTools(): Promise<ToolKit> {
  return Promise.reject(new Error('tier0_tool: this runtime has no tools'));
}
