export { loadConfig, DEFAULT_WORKER_PORT, type Config } from './load-config.js';
export { parseRateLimit, type RateLimitSpec } from './rate-limit-spec.js';
export { packageRoot, packageVersion } from './package-info.js';
export { shippedAgentCatalogue, shippedModelsFile } from './package-info.js';
export {
  resolveWorkflowsLocation,
  shippedWorkflowsDir,
  SHIPPED_WORKFLOWS_READ_ONLY,
  WORKFLOWS_SOURCES,
  type WorkflowsLocation,
  type WorkflowsSource,
} from './workflows-location.js';
export { MODEL_ID, type LlmSettings } from './llm-settings.js';
export {
  resolveTraceSampler,
  type TraceSamplerName,
  type TraceSamplerSetting,
  type TraceSamplerSource,
} from './trace-sampler.js';
export {
  chainSecretProviders,
  createEnvSecretProvider,
  createFileSecretProvider,
  createSecretProvider,
  type SecretProvider,
} from './secrets.js';
