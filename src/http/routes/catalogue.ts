/**
 * `GET /api/agents`, `GET /api/workflows`, `GET /api/adapters` (spec endpoints 3, 6, 7; primary
 * shapes).
 */
import type Router from '@koa/router';
import { ADAPTERS } from '../../engine/types.js';
import type { AdaptersResponse } from '../../generated/api/adapters-response.js';
import type { AgentsResponse } from '../../generated/api/agents-response.js';
import type { WorkflowsResponse } from '../../generated/api/workflows-response.js';
import type { WorkflowRegistry } from '../../workflow/index.js';

/** What the agents endpoint needs of a catalogue entry. */
export interface AgentEntry {
  role: string;
  name: string;
  description: string;
  tier: number | string;
}

export interface CatalogueRouteDeps {
  registry: Pick<WorkflowRegistry, 'list'>;
  /** Reads the agent catalogue; called on every request (the spec forbids caching). */
  loadAgents: () => Promise<readonly AgentEntry[]>;
}

export function registerCatalogueRoutes(router: Router, deps: CatalogueRouteDeps): void {
  router.get('/api/agents', async (ctx) => {
    const agents = await deps.loadAgents();
    const body: AgentsResponse = {
      agents: agents.map((agent) => ({
        name: agent.name,
        description: agent.description,
        tier: String(agent.tier),
        role: agent.role,
      })),
    };
    ctx.body = body;
  });
  router.get('/api/workflows', async (ctx) => {
    const body: WorkflowsResponse = { workflows: await deps.registry.list() };
    ctx.body = body;
  });
  const adapters: AdaptersResponse = { adapters: [...ADAPTERS] };
  router.get('/api/adapters', (ctx) => {
    ctx.body = adapters;
  });
}
