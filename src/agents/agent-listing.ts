/**
 * Every agent a step may name, for `GET /api/agents`: the deterministic tier-0 agents, the
 * application's custom agents, then the LLM roles of the catalogue (`tier{N}_{role}`).
 */
import { parseAgentName, TIER0_AGENT_TABLE, TIER0_AGENTS } from '../workflow/agent-names.js';
import type { AgentInfo } from './catalogue.js';

/** One entry of the agents listing (the spec's Agent shape, `tier` as a number here). */
export interface AgentListing {
  /** Display name (the agent's full name for tier-0 and custom agents). */
  name: string;
  description: string;
  /** 0 for deterministic and custom agents (unless their name says `tier{N}_`), else 1–5. */
  tier: number;
  /** The role in `tier{N}_{role}`, or the full name of a custom agent. */
  role: string;
}

/** The listing: tier-0 agents, custom agents (not shadowed ones twice), catalogue roles. */
export function listAgents(
  catalogue: readonly AgentInfo[],
  customNames: Iterable<string> = [],
): AgentListing[] {
  const custom = new Set(customNames);
  const tier0 = TIER0_AGENTS.filter((name) => !custom.has(name)).map((name) => ({
    name,
    description: TIER0_AGENT_TABLE[name].description,
    tier: 0,
    role: name.slice('tier0_'.length),
  }));
  const registered = [...custom].sort().map((name) => ({
    name,
    description: 'Custom agent registered by the application.',
    tier: parseAgentName(name)?.tier ?? 0,
    role: name,
  }));
  const roles = catalogue.map((agent) => ({
    name: agent.name,
    description: agent.description,
    tier: agent.tier,
    role: agent.role,
  }));
  return [...tier0, ...registered, ...roles];
}
