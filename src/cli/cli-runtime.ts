/**
 * The runtime of a one-shot command (`run`, `eval`): built from the resolved settings like the
 * service's, logging warnings and errors to stderr so stdout keeps the command's output.
 */
import { createRuntime } from '../engine/runtime.js';
import type { Runtime, RuntimeOptions } from '../engine/types.js';
import type { Config } from '../config/index.js';
import type { LlmService } from '../llm/llm-service.js';
import { createLogger } from '../log.js';
import { toolsOptionsFromConfig } from '../tools/index.js';
import { customAgents } from './settings.js';

/**
 * `llm` is the command's LLM layer (undefined in no-LLM mode); the caller closes it. `inspect`
 * is the inspector of `run --inspect`.
 */
export async function createCliRuntime(
  config: Config,
  llm: LlmService | undefined,
  inspect?: RuntimeOptions['inspect'],
): Promise<Runtime> {
  return createRuntime({
    ...(inspect === undefined ? {} : { inspect }),
    ...(llm === undefined ? {} : { llm: llm.router }),
    workflowsDir: config.workflowsDir,
    runsDir: config.runsDir,
    noLlm: config.noLlm,
    maxConcurrency: config.maxConcurrency,
    defaultAdapter: config.defaultAdapter,
    agents: await customAgents(config),
    limits: config.limits,
    tools: toolsOptionsFromConfig(config, llm?.providers),
    logger: createLogger({ format: config.logFormat, level: 'warn', destination: process.stderr }),
    ...(config.externalAgentsDir !== undefined
      ? { externalAgentsDir: config.externalAgentsDir }
      : {}),
  });
}
