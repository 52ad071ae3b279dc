/**
 * Agents registered by the application (`createRuntime({ agents })`, `AGENTIC_AGENTS_MODULE`):
 * any name a step can carry, deterministic or not, taking precedence over the built-in agents.
 */
import type { Agent } from './types.js';

/** What a custom agent's name may look like: what a YAML `agent:` value can be written as. */
export const CUSTOM_AGENT_NAME_RE = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;

/** Every problem of a record of custom agents (empty when it is usable). */
export function customAgentProblems(agents: unknown): string[] {
  if (typeof agents !== 'object' || agents === null || Array.isArray(agents)) {
    return ['agents must be an object mapping agent names to agent functions'];
  }
  const problems: string[] = [];
  for (const [name, agent] of Object.entries(agents)) {
    if (!CUSTOM_AGENT_NAME_RE.test(name)) {
      problems.push(
        `agent name '${name}' must start with a letter and hold only letters, digits, '_', '.' and '-' (at most 128)`,
      );
    }
    if (typeof agent !== 'function') {
      problems.push(
        `agent '${name}' must be a function (request) => Promise<{ output, modelUsed, tokensUsed }>`,
      );
    }
  }
  return problems;
}

/** The names of a record of custom agents, for workflow validation. */
export function customAgentNames(
  agents: Readonly<Record<string, Agent>> | undefined,
): ReadonlySet<string> {
  return new Set(agents === undefined ? [] : Object.keys(agents));
}
