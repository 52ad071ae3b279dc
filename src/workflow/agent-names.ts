/**
 * Agent names: `tier{0-5}_{role}`. Tier 0 is deterministic (no model) and limited to the
 * built-in agents of ARCHITECTURE §7; tiers 1–5 are LLM agents whose role comes from the
 * agent catalogue.
 */

/**
 * The built-in deterministic agents (ARCHITECTURE §7): the one table of them. Their names (every
 * other `tier0_*` name is invalid at load), the descriptions `GET /api/agents` lists and which of
 * them compute synchronously derive from it; src/agents/tier0 gives each its implementation, in a
 * table typed by these names. `synchronous`: the agent computes its answer on the calling thread
 * (no I/O, no timer), so a step timeout could neither fire nor abort it and the runtime arms none
 * (README "Limits": a timer and a guard per step cost these steps about 2x in `npm run bench`).
 */
export const TIER0_AGENT_TABLE = {
  tier0_echo: { description: 'Deterministic: outputs its inputs.', synchronous: true },
  tier0_fail: { description: 'Deterministic: fails with inputs.message.', synchronous: true },
  tier0_sleep: {
    description:
      'Deterministic: waits inputs.ms milliseconds (abortable), then outputs its inputs.',
    synchronous: false,
  },
  tier0_process: {
    description: 'Deterministic: {result} is the trimmed inputs.text.',
    synchronous: true,
  },
  tier0_counter: {
    description: 'Deterministic: {count} is the number of characters of inputs.text.',
    synchronous: true,
  },
  tier0_parser: {
    description:
      'Deterministic: functions, classes, imports and line metrics of Python/JS/TS source.',
    synchronous: true,
  },
  tier0_tool: {
    description:
      'Deterministic: calls inputs.tool (listed in the step tools) with inputs.args; {result} is its result.',
    synchronous: false,
  },
} as const satisfies Record<`tier0_${string}`, { description: string; synchronous: boolean }>;
export type Tier0Agent = keyof typeof TIER0_AGENT_TABLE;

/** The tier-0 agent names, in the table's order. */
export const TIER0_AGENTS = Object.freeze(Object.keys(TIER0_AGENT_TABLE)) as readonly Tier0Agent[];

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
