import { TIER0_AGENT_TABLE, type Tier0Agent } from '../../workflow/agent-names.js';
import type { Agent } from '../types.js';
import { counterAgent } from './counter.js';
import { echoAgent } from './echo.js';
import { failAgent } from './fail.js';
import { parserAgent } from './parser.js';
import { processAgent } from './process.js';
import { sleepAgent } from './sleep.js';

export { parseSource, type ParsedSource, type SourceSymbol } from './parser.js';

export { createToolAgent } from './tool.js';

/**
 * The implementation of each agent of TIER0_AGENT_TABLE (the type requires one per name);
 * `tier0_tool` is made per workflow by the agent set (it needs the runtime's tools).
 */
export const TIER0_AGENT_IMPLEMENTATIONS: Readonly<
  Record<Exclude<Tier0Agent, 'tier0_tool'>, Agent>
> = Object.freeze({
  tier0_echo: echoAgent,
  tier0_fail: failAgent,
  tier0_sleep: sleepAgent,
  tier0_process: processAgent,
  tier0_counter: counterAgent,
  tier0_parser: parserAgent,
});

/**
 * The built-in agents the table marks `synchronous` (TIER0_AGENT_TABLE): the runtime's default step
 * timeout is not armed for them (docs/limits.md). `tier0_sleep` and `tier0_tool` wait, and keep
 * the default.
 */
export const SYNCHRONOUS_TIER0_AGENTS: ReadonlySet<Agent> = new Set<Agent>(
  (Object.keys(TIER0_AGENT_IMPLEMENTATIONS) as (keyof typeof TIER0_AGENT_IMPLEMENTATIONS)[])
    .filter((name) => TIER0_AGENT_TABLE[name].synchronous)
    .map((name) => TIER0_AGENT_IMPLEMENTATIONS[name]),
);
