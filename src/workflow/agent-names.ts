/**
 * Agent names: `tier{0-5}_{role}`. Tier 0 is deterministic (no model) and limited to the
 * built-in agents of ARCHITECTURE §7; tiers 1–5 are LLM agents whose role comes from the
 * agent catalogue.
 */

/** The deterministic agents; every other `tier0_*` name is invalid. */
export const TIER0_AGENTS = [
  'tier0_echo',
  'tier0_fail',
  'tier0_sleep',
  'tier0_process',
  'tier0_counter',
  'tier0_parser',
  'tier0_tool',
] as const;
export type Tier0Agent = (typeof TIER0_AGENTS)[number];

/** Highest LLM tier. */
export const MAX_TIER = 5;

/** Source of the schema's `agent` pattern; keep the two in step (a test checks it). */
export const AGENT_NAME_PATTERN = '^tier[0-5]_[a-z][a-z0-9_]*$';
const AGENT_NAME_RE = /^tier([0-5])_([a-z][a-z0-9_]*)$/;

export interface AgentName {
  tier: number;
  role: string;
}

/** Splits `tierN_role` into its parts; undefined when the name does not have that form. */
export function parseAgentName(agent: string): AgentName | undefined {
  const match = AGENT_NAME_RE.exec(agent);
  if (match === null) return undefined;
  return { tier: Number(match[1]), role: match[2] as string };
}

export function isTier0Agent(agent: string): agent is Tier0Agent {
  return (TIER0_AGENTS as readonly string[]).includes(agent);
}

/**
 * Why `agent` is not a usable agent name, or undefined when it is: the `tierN_role` form, and
 * for tier 0 one of {@link TIER0_AGENTS}.
 */
export function agentNameProblem(agent: string): string | undefined {
  const parsed = parseAgentName(agent);
  if (parsed === undefined) {
    return `agent '${agent}' must be tier{0-5}_{role} with a lower-case role (e.g. tier2_reviewer)`;
  }
  if (parsed.tier === 0 && !isTier0Agent(agent)) {
    return `unknown tier-0 agent '${agent}'; tier-0 agents are ${TIER0_AGENTS.join(', ')}`;
  }
  return undefined;
}
