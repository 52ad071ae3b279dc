/**
 * Every agent a step may name, for `GET /api/agents`: the deterministic tier-0 agents, the
 * application's custom agents, then the LLM roles of the catalogue (`tier{N}_{role}`).
 */
import { parseAgentName, TIER0_AGENTS } from '../workflow/agent-names.js';
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

/** What each tier-0 agent does (ARCHITECTURE §7). */
const TIER0_DESCRIPTIONS: Readonly<Record<(typeof TIER0_AGENTS)[number], string>> = {
  tier0_echo: 'Deterministic: outputs its inputs.',
  tier0_fail: 'Deterministic: fails with inputs.message.',
  tier0_sleep: 'Deterministic: waits inputs.ms milliseconds (abortable), then outputs its inputs.',
  tier0_process: 'Deterministic: {result} is the trimmed inputs.text.',
  tier0_counter: 'Deterministic: {count} is the number of characters of inputs.text.',
  tier0_parser:
    'Deterministic: functions, classes, imports and line metrics of Python/JS/TS source.',
  tier0_tool:
    'Deterministic: calls inputs.tool (listed in the step tools) with inputs.args; {result} is its result.',
};

/** The listing: tier-0 agents, custom agents (not shadowed ones twice), catalogue roles. */
export function listAgents(
  catalogue: readonly AgentInfo[],
  customNames: Iterable<string> = [],
): AgentListing[] {
  const custom = new Set(customNames);
  const tier0 = TIER0_AGENTS.filter((name) => !custom.has(name)).map((name) => ({
    name,
    description: TIER0_DESCRIPTIONS[name],
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
