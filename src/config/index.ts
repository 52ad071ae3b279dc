export { loadConfig, type Config } from './load-config.js';
export { parseRateLimit, type RateLimitSpec } from './rate-limit-spec.js';
export { packageRoot, packageVersion } from './package-info.js';
