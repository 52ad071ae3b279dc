import { expect } from 'chai';
import { listAgents } from '../../../src/agents/agent-listing.js';
import {
  SYNCHRONOUS_TIER0_AGENTS,
  TIER0_AGENT_IMPLEMENTATIONS,
} from '../../../src/agents/tier0/index.js';
import { TIER0_AGENT_TABLE, TIER0_AGENTS } from '../../../src/workflow/agent-names.js';

describe('tier-0 agents (one table: TIER0_AGENT_TABLE)', () => {
  it('gives the names workflows may use, in the table order', () => {
    expect(TIER0_AGENTS).to.deep.equal(Object.keys(TIER0_AGENT_TABLE));
  });

  it('gives GET /api/agents its tier-0 entries', () => {
    expect(listAgents([]).filter((agent) => agent.tier === 0)).to.deep.equal(
      Object.entries(TIER0_AGENT_TABLE).map(([name, row]) => ({
        name,
        description: row.description,
        tier: 0,
        role: name.slice('tier0_'.length),
      })),
    );
  });

  it('has an implementation for each agent but tier0_tool (made per workflow)', () => {
    expect(Object.keys(TIER0_AGENT_IMPLEMENTATIONS)).to.deep.equal(
      TIER0_AGENTS.filter((name) => name !== 'tier0_tool'),
    );
  });

  it('leaves the step timeout unarmed exactly for the agents it marks synchronous', () => {
    const synchronous = Object.entries(TIER0_AGENT_IMPLEMENTATIONS)
      .filter(([, agent]) => SYNCHRONOUS_TIER0_AGENTS.has(agent))
      .map(([name]) => name);
    expect(synchronous).to.deep.equal(
      TIER0_AGENTS.filter((name) => TIER0_AGENT_TABLE[name].synchronous),
    );
    expect(synchronous).to.deep.equal([
      'tier0_echo',
      'tier0_fail',
      'tier0_process',
      'tier0_counter',
      'tier0_parser',
    ]);
  });
});
