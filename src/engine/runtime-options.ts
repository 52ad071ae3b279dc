import { resolve } from 'node:path';
import { resolveWorkflowsLocation } from '../config/workflows-location.js';
import { customAgentProblems } from '../agents/custom-agents.js';
import { AppError, ERROR_CODES } from '../errors.js';
import { createSilentLogger } from '../log.js';
import { DEFAULT_RETRY_BASE_MS } from './retry-policy.js';
import { ADAPTERS, type ResolvedRuntimeOptions, type RuntimeOptions } from './types.js';

/** Steps running at once per run when nothing says otherwise (spec: native concurrency 10). */
export const DEFAULT_MAX_CONCURRENCY = 10;

/**
 * Applies the defaults documented on {@link RuntimeOptions}: `./workflows` when it exists, else
 * the package's `workflows/`,
 * `./runs` (from the current directory), persist on, no-LLM off, concurrency 10, no run
 * timeout, adapter `graph`, no inspector, a silent logger, one attempt per step, 500 ms retry
 * base, 16 run-file writes at once, 10 000 queued, write retries from 100 ms to 5 s, token
 * deltas coalesced over 100 ms. Throws a
 * config {@link AppError} for values out of range.
 */
export function resolveRuntimeOptions(options: RuntimeOptions = {}): ResolvedRuntimeOptions {
  const problems: string[] = [];
  const positiveInt = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1) problems.push(`${name} must be a positive integer`);
    return value;
  };
  const maxConcurrency = positiveInt(
    'maxConcurrency',
    options.maxConcurrency,
    DEFAULT_MAX_CONCURRENCY,
  );
  const maxAttempts = positiveInt('maxAttempts', options.maxAttempts, 1);
  const writeConcurrency = positiveInt('writeConcurrency', options.writeConcurrency, 16);
  const writeQueueMax = positiveInt('writeQueueMax', options.writeQueueMax, 10_000);
  const writeRetryMaxMs = options.writeRetryMaxMs ?? 5000;
  const writeRetryBaseMs = options.writeRetryBaseMs ?? Math.min(100, writeRetryMaxMs);
  if (!(writeRetryBaseMs > 0 && writeRetryMaxMs >= writeRetryBaseMs)) {
    problems.push('writeRetryBaseMs must be positive and at most writeRetryMaxMs');
  }
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    problems.push('timeoutMs must be a positive number of milliseconds');
  }
  if (options.tokenDeltaIntervalMs !== undefined && !(options.tokenDeltaIntervalMs >= 0)) {
    problems.push('tokenDeltaIntervalMs must be zero or more milliseconds');
  }
  if (options.retryBaseMs !== undefined && !(options.retryBaseMs >= 0)) {
    problems.push('retryBaseMs must be zero or more milliseconds');
  }
  const defaultAdapter = options.defaultAdapter ?? 'graph';
  if (!(ADAPTERS as readonly string[]).includes(defaultAdapter)) {
    problems.push(`defaultAdapter must be one of ${ADAPTERS.join(', ')}`);
  }
  if (options.agents !== undefined) problems.push(...customAgentProblems(options.agents));
  if (problems.length > 0) {
    throw new AppError(ERROR_CODES.CONFIG, `Invalid runtime options: ${problems.join('; ')}`);
  }
  return {
    workflowsDir: resolveWorkflowsLocation(options.workflowsDir).dir,
    runsDir: resolve(options.runsDir ?? 'runs'),
    persist: options.persist ?? true,
    noLlm: options.noLlm ?? false,
    maxConcurrency,
    timeoutMs: options.timeoutMs,
    defaultAdapter,
    inspect: options.inspect,
    logger: options.logger ?? createSilentLogger(),
    externalAgentsDir: options.externalAgentsDir,
    maxAttempts,
    retryBaseMs: options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    writeConcurrency,
    writeQueueMax,
    writeRetryBaseMs,
    writeRetryMaxMs,
    tokenDeltaIntervalMs: options.tokenDeltaIntervalMs ?? 100,
  };
}
