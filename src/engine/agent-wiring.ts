/**
 * A runtime's agent wiring: the model client (traced when tracing is on), the tool kit made on
 * the first tool call, the agent catalogue (personas) and the agent set of each run.
 */
import { agentLoopLimits } from '../agents/agent-loop.js';
import { createAgentSet, type AgentLookup } from '../agents/agent-set.js';
import { createAgentCatalogueLoader, findAgent, type AgentInfo } from '../agents/catalogue.js';
import type { Agent } from '../agents/types.js';
import { shippedAgentCatalogue } from '../config/package-info.js';
import { errorMessage } from '../errors.js';
import { createNoLlmClient } from '../llm/no-llm.js';
import type { LlmClient } from '../llm/types.js';
import { createUnconfiguredLlmClient } from '../llm/unconfigured.js';
import {
  createToolCallJournal,
  createToolKit,
  type ToolCallJournal,
  type ToolKit,
  type ToolsOptions,
} from '../tools/index.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import type { RuntimeTracing } from './runtime-tracing.js';
import type { ResolvedRuntimeOptions } from './types.js';

/** The profile lookup of runs without an agent catalogue (no LLM steps). */
const noProfile = (): undefined => undefined;

export interface AgentWiringOptions {
  resolved: ResolvedRuntimeOptions;
  /** The embedder's model client (`RuntimeOptions.llm`). */
  llm: LlmClient | undefined;
  /** The embedder's extra agents (`RuntimeOptions.agents`). */
  agents: Readonly<Record<string, Agent>> | undefined;
  /** The tool options, with the approval provider observed (see runtime-approvals.ts). */
  tools: ToolsOptions;
  tracing: RuntimeTracing | undefined;
  /** Wraps the model client LLM steps call (the run budgets' gate). @default as it is */
  wrapLlm?: (llm: LlmClient) => LlmClient;
}

export interface AgentWiring {
  /**
   * The agents of a run. Without a catalogue (no LLM steps) the set depends on the workflow
   * only, so it is shared by that workflow's runs.
   */
  agentSet(workflow: CompiledWorkflow, catalogue: readonly AgentInfo[]): AgentLookup;
  /** Whether a workflow has LLM steps (tier > 0); remembered per compiled workflow. */
  hasLlmSteps(workflow: CompiledWorkflow): boolean;
  /**
   * The agent catalogue (personas) for a run with LLM steps, looked up per run so an edited file
   * applies to the next run; files are parsed again only when they change, and runs starting
   * while a lookup is in flight share it (a burst of starts costs one lookup, not one each).
   */
  personas(): Promise<readonly AgentInfo[]>;
  /** The MCP tool-call journal (runs that persist, with MCP servers configured). */
  readonly toolCalls: ToolCallJournal | undefined;
  /** The tool kit (made on first use): `GET /api/tools`. */
  tools(): Promise<ToolKit>;
  /** Closes the tool kit, when one was made. */
  close(): Promise<void>;
}

export function createAgentWiring(options: AgentWiringOptions): AgentWiring {
  const { resolved, tracing } = options;
  const log = resolved.logger;
  const untracedLlm: LlmClient = resolved.noLlm
    ? createNoLlmClient()
    : (options.llm ?? createUnconfiguredLlmClient());
  const traced = tracing === undefined ? untracedLlm : tracing.models(untracedLlm);
  // The budget gate is outermost: a call it holds back has no span yet.
  const llm = options.wrapLlm === undefined ? traced : options.wrapLlm(traced);
  const extra: Readonly<Record<string, Agent>> = options.agents ?? {};
  // MCP calls are journaled next to the run files so a resumed run does not repeat them.
  const toolCalls =
    resolved.persist && (options.tools.mcp?.servers.length ?? 0) > 0
      ? createToolCallJournal(resolved.runsDir)
      : undefined;
  const toolOptions: ToolsOptions =
    toolCalls === undefined ? options.tools : { ...options.tools, callJournal: toolCalls };
  // Made on the first tool call: opening the memory file is I/O a tool-less runtime never needs.
  let toolkit: Promise<ToolKit> | undefined;
  const tools = (): Promise<ToolKit> =>
    (toolkit ??=
      tracing === undefined
        ? createToolKit(toolOptions)
        : createToolKit(toolOptions).then(tracing.tools));
  const loopLimits = agentLoopLimits(options.tools);
  const sharedAgentSets = new WeakMap<CompiledWorkflow, AgentLookup>();
  const llmWorkflows = new WeakMap<CompiledWorkflow, boolean>();
  const loadCatalogue = createAgentCatalogueLoader({
    files: [shippedAgentCatalogue()],
    dirs: resolved.externalAgentsDir === undefined ? [] : [resolved.externalAgentsDir],
    limits: resolved.limits,
  });

  return {
    agentSet(workflow, catalogue) {
      if (catalogue.length > 0) {
        return createAgentSet(workflow, {
          llm,
          profile: (role) => findAgent(catalogue, role),
          extra,
          tools,
          loopLimits,
        });
      }
      let agents = sharedAgentSets.get(workflow);
      if (agents === undefined) {
        agents = createAgentSet(workflow, { llm, profile: noProfile, extra, tools, loopLimits });
        sharedAgentSets.set(workflow, agents);
      }
      return agents;
    },
    hasLlmSteps(workflow) {
      let llmSteps = llmWorkflows.get(workflow);
      if (llmSteps === undefined) {
        llmSteps = workflow.steps.some((step) => step.tier > 0);
        llmWorkflows.set(workflow, llmSteps);
      }
      return llmSteps;
    },
    async personas() {
      try {
        return await loadCatalogue();
      } catch (error) {
        log.debug(
          { err: errorMessage(error) },
          'agent catalogue unavailable; LLM steps run without personas',
        );
        return [];
      }
    },
    toolCalls,
    tools,
    async close() {
      await toolkit?.then((kit) => kit.close()).catch(() => undefined);
    },
  };
}
