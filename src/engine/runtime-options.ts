import { resolve } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { resolveWorkflowsLocation } from '../config/workflows-location.js';
import { isAdapterName } from '../config/adapter-names.js';
import { WRITE_SYNC_MODE, WRITE_SYNC_MODES } from '../config/write-sync-modes.js';
import { isResumePolicy, RESUME_POLICIES } from '../config/resume-policy.js';
import { customAgentProblems } from '../agents/custom-agents.js';
import { AppError, ERROR_CODES } from '../errors.js';
import { createSilentLogger } from '../log.js';
import { resolveContentLimits } from '../workflow/limits.js';
import { DEFAULT_OWNER_LEASE_MS } from '../store/owner.js';
import { DEFAULT_RETRY_BASE_MS } from './retry-policy.js';
import { ADAPTERS, type ResolvedRuntimeOptions, type RuntimeOptions } from './types.js';

/** Steps running at once per run when nothing says otherwise (spec: native concurrency 10). */
export const DEFAULT_MAX_CONCURRENCY = 10;

/**
 * Runs active at once when nothing says otherwise. Not a memory bound for the engine: an idle
 * active run holds about 15 KiB of heap (1000 runs parked on a `tier0_sleep` step, started
 * through the HTTP service with persistence on, grew the heap by 15 MiB). It bounds what runs
 * hold outside the engine: 100 runs of up to `maxConcurrency` (10) steps is up to 1000 model
 * calls in flight, each with a socket, its prompt and its output in memory, already more than
 * a provider's rate limits let through; runs beyond that would only wait on the provider.
 */
export const DEFAULT_MAX_ACTIVE_RUNS = 100;

/**
 * The default of `maxRunsHeldBytes`: a sixteenth of the heap limit. What runs hold is counted in
 * JSON bytes, about what their strings take once flattened; writing them out costs up to three
 * more copies for a moment (a journal line, the commit's text flattened for the write worker, a
 * run record). Measured with the fault campaign's input (100 steps each echoing a 900 KB
 * rendering, one run every 0.5 s) under `--max-old-space-size=256` (heap limit 304 MiB): a
 * quarter (76 MiB, 4 runs of 16 MiB) still ran out of heap; an eighth (38 MiB, 2 runs) lived
 * while serving but, in 1 of 2 full-suite runs, not through a SIGTERM with both runs in flight
 * (their end records stringified together: out of heap in JSON.stringify). A sixteenth keeps
 * room for that.
 */
export function defaultMaxRunsHeldBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / 16);
}

/**
 * Timeout of a step attempt that sets no `timeout_seconds`: 30 minutes, three times a model
 * call's own deadline (`AGENTIC_LLM_CALL_TIMEOUT_MS`, 10 minutes), so a step with tools has room
 * for several calls, the tools and an approval wait (5 minutes by default).
 */
export const DEFAULT_STEP_TIMEOUT_MS = 30 * 60 * 1000;

/**
 * Applies the defaults documented on {@link RuntimeOptions}: `./workflows` when it exists, else
 * the package's `workflows/`, `./runs` (from the current directory), persist on, no-LLM off,
 * concurrency 10, 100 active runs, a sixteenth of the heap limit held by runs, no run timeout, a 30-minute step timeout, adapter `graph`, no inspector, a silent
 * logger, one attempt per step, 500 ms retry base, 16 run-file writes at once, 10 000 queued,
 * write retries from 100 ms to 5 s, journal commits every 50 ms, the content bounds of
 * `DEFAULT_CONTENT_LIMITS` (docs/limits.md), token deltas coalesced over 100 ms. Throws a
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
  const maxActiveRuns = positiveInt(
    'maxActiveRuns',
    options.maxActiveRuns,
    DEFAULT_MAX_ACTIVE_RUNS,
  );
  const maxRunsHeldBytes = positiveInt(
    'maxRunsHeldBytes',
    options.maxRunsHeldBytes,
    defaultMaxRunsHeldBytes(),
  );
  const maxAttempts = positiveInt('maxAttempts', options.maxAttempts, 1);
  const writeConcurrency = positiveInt('writeConcurrency', options.writeConcurrency, 16);
  const writeSync = options.writeSync ?? WRITE_SYNC_MODE.LOG;
  if (!WRITE_SYNC_MODES.includes(writeSync)) {
    problems.push(`writeSync must be one of ${WRITE_SYNC_MODES.join(', ')}`);
  }
  const writeQueueMax = positiveInt('writeQueueMax', options.writeQueueMax, 10_000);
  const writeRetryMaxMs = options.writeRetryMaxMs ?? 5000;
  const writeRetryBaseMs = options.writeRetryBaseMs ?? Math.min(100, writeRetryMaxMs);
  if (!(writeRetryBaseMs > 0 && writeRetryMaxMs >= writeRetryBaseMs)) {
    problems.push('writeRetryBaseMs must be positive and at most writeRetryMaxMs');
  }
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    problems.push('timeoutMs must be a positive number of milliseconds');
  }
  if (options.stepTimeoutMs !== undefined && !(options.stepTimeoutMs > 0)) {
    problems.push('stepTimeoutMs must be a positive number of milliseconds');
  }
  if (options.tokenDeltaIntervalMs !== undefined && !(options.tokenDeltaIntervalMs >= 0)) {
    problems.push('tokenDeltaIntervalMs must be zero or more milliseconds');
  }
  if (options.retryBaseMs !== undefined && !(options.retryBaseMs >= 0)) {
    problems.push('retryBaseMs must be zero or more milliseconds');
  }
  const journalCommitMs = options.journalCommitMs ?? 50;
  if (!(journalCommitMs >= 0)) problems.push('journalCommitMs must be zero or more milliseconds');
  const ownerLeaseMs = options.ownerLeaseMs ?? DEFAULT_OWNER_LEASE_MS;
  if (!(ownerLeaseMs >= 300)) problems.push('ownerLeaseMs must be at least 300 milliseconds');
  const resume = options.resume ?? 'auto';
  if (!isResumePolicy(resume)) problems.push(`resume must be one of ${RESUME_POLICIES.join(', ')}`);
  const defaultAdapter = options.defaultAdapter ?? 'graph';
  if (!isAdapterName(defaultAdapter)) {
    problems.push(`defaultAdapter must be one of ${ADAPTERS.join(', ')}`);
  }
  if (options.agents !== undefined) problems.push(...customAgentProblems(options.agents));
  const budgetStepDownAt = options.budgets?.stepDownAt ?? 0.8;
  if (!(budgetStepDownAt > 0 && budgetStepDownAt <= 1)) {
    problems.push('budgets.stepDownAt must be above 0 and at most 1');
  }
  const budgetCallMaxTokens = positiveInt(
    'budgets.callMaxTokens',
    options.budgets?.callMaxTokens,
    4096,
  );
  const limits = resolveContentLimits(options.limits, problems);
  if (problems.length > 0) {
    throw new AppError(ERROR_CODES.CONFIG, `Invalid runtime options: ${problems.join('; ')}`);
  }
  return {
    workflowsDir: resolveWorkflowsLocation(options.workflowsDir).dir,
    runsDir: resolve(options.runsDir ?? 'runs'),
    persist: options.persist ?? true,
    noLlm: options.noLlm ?? false,
    maxConcurrency,
    maxActiveRuns,
    maxRunsHeldBytes,
    timeoutMs: options.timeoutMs,
    defaultAdapter,
    inspect: options.inspect,
    logger: options.logger ?? createSilentLogger(),
    externalAgentsDir: options.externalAgentsDir,
    maxAttempts,
    retryBaseMs: options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    writeConcurrency,
    writeSync,
    writeQueueMax,
    writeRetryBaseMs,
    writeRetryMaxMs,
    journalCommitMs,
    ownerLeaseMs,
    resume,
    limits,
    tokenDeltaIntervalMs: options.tokenDeltaIntervalMs ?? 100,
    stepTimeoutMs: options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
    budgetStepDownAt,
    budgetCallMaxTokens,
  };
}
