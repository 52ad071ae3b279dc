/**
 * "Why isn't my run moving" (`GET /api/runs/{run_id}/explain`, `agentic explain`): an active
 * run's engine facts (`machines/scheduler/step-waits.ts`, read from the engine actor's snapshot),
 * its pending approvals and the circuit breakers of its steps' tiers, turned into stable reason
 * codes with details and a sentence each. Pure: the caller passes in the clock and the lookups.
 */
import type { LlmRouter } from '../llm/router.js';
import type { PendingRequest } from './runtime-approvals.js';
import { limitsToWire } from './budget/budget-limits.js';
import type {
  RunExplanationResponse,
  StepExplanation,
  StepWait,
} from '../generated/api/run-explanation-response.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import type { MapProgress } from './kinds/map.js';
import { runEngineOf, type RunActor } from '../../machines/run.logic.js';
import {
  engineFactSource,
  type EngineFacts,
  type StepFacts,
} from '../../machines/scheduler/step-waits.js';

export type {
  RunExplanationResponse,
  StepExplanation,
  StepWait,
} from '../generated/api/run-explanation-response.js';

/** The stable reason codes of a step's wait (the schema's enum). */
export const WAIT_REASONS = {
  DEPENDENCIES: 'dependencies',
  CONDITION_FALSE: 'condition_false',
  APPROVAL: 'approval',
  INPUT: 'input',
  BUDGET: 'budget',
  RETRY_BACKOFF: 'retry_backoff',
  CIRCUIT_OPEN: 'circuit_open',
  CONCURRENCY_LIMIT: 'concurrency_limit',
  RUNNING: 'running',
  FAILED: 'failed',
  SKIPPED: 'skipped',
} as const satisfies Record<string, StepWait['reason']>;

/** Each reason in a few words, for the run's one-line summary (the waits say the details). */
const PHRASES: Record<StepWait['reason'], string> = {
  dependencies: 'waits for its dependencies',
  condition_false: 'was skipped by its when:',
  approval: 'waits for an approval',
  input: 'waits for an answer from a person',
  budget: 'waits for its budget to be raised',
  retry_backoff: 'waits to retry',
  circuit_open: 'has an open circuit breaker on its tier',
  concurrency_limit: 'waits for a free slot (max_concurrency)',
  running: 'is running',
  failed: 'failed',
  skipped: 'was skipped',
};

/** What the runtime knows of an active run of this process (`runtime.explain`). */
export interface ActiveRunFacts {
  facts: EngineFacts;
  workflow: CompiledWorkflow;
  /** The running map steps' items by step name (kinds/map.ts). @default none */
  items?: ReadonlyMap<string, Readonly<MapProgress>>;
}

/** A circuit breaker that holds calls back (`open`, or `half_open` with its trial under way). */
export interface HeldBreaker {
  model: string;
  state: 'open' | 'half_open';
  retryInMs: number;
}

/** The breakers of the models a step of `tier` (pinned to `model`) would call that are not closed. */
export type BreakerLookup = (tier: number, model: string | undefined) => HeldBreaker[];

/** What explaining an active run needs besides its facts. */
export interface ExplainContext {
  /** Epoch ms now. */
  now: number;
  /** The run's tool calls and human steps' questions waiting for a person. @default none */
  approvals?: readonly PendingRequest[];
  /** The approval provider's name (how a call is answered). @default 'http' */
  approvalProvider?: string;
  /** @default no breakers known */
  breakers?: BreakerLookup;
}

/** A running step's status while a person is asked something for it, by what is asked. */
const ASKING_STATUS = {
  tool: 'awaiting_approval',
  input: 'awaiting_input',
  budget: 'awaiting_budget',
} as const satisfies Record<
  NonNullable<PendingRequest['kind']> | 'tool',
  StepExplanation['status']
>;

/** Longest value text shown for what a `when:` read. */
const VALUE_CHARS = 200;

/** A value as shown: itself when short, else the start of its JSON text and an ellipsis. */
export function shownValue(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > VALUE_CHARS ? `${value.slice(0, VALUE_CHARS)}…` : value;
  if (typeof value !== 'object' || value === null) return value;
  const text = JSON.stringify(value);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS)}…` : value;
}

/** The values a `when:` read, each as {@link shownValue}. */
export function shownValues(values: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) shown[key] = shownValue(value);
  return shown;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** `1.2 s`, `45 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

function list(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1)!}`;
}

/** The wait of a step skipped by a false `when:`. */
export function conditionWait(
  expression: string,
  values: Record<string, unknown>,
  from: 'run' | 'record',
): StepWait {
  const shown = shownValues(values);
  const seen = Object.entries(shown).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
  const saw = from === 'run' ? 'it saw' : 'the run file shows';
  return {
    reason: WAIT_REASONS.CONDITION_FALSE,
    message: `skipped: its when: ${expression} was false${seen.length === 0 ? '' : ` (${saw} ${list(seen)})`}`,
    expression,
    values: shown,
  };
}

/** How a finished step that did not succeed ended (failed, or skipped for another reason). */
export function endedWait(status: 'failed' | 'skipped', reason: string | null): StepWait {
  return status === 'failed'
    ? { reason: WAIT_REASONS.FAILED, message: `failed: ${reason ?? 'failed'}`, error: reason }
    : {
        reason: WAIT_REASONS.SKIPPED,
        message: `skipped: ${reason ?? 'skipped'}`,
        skip_reason: reason,
      };
}

/** The wait of a step whose tool call `call` (or question) waits for a person. */
export function approvalWait(call: PendingRequest, provider: string, now: number): StepWait {
  if (call.kind === 'input') return inputWait(call, now);
  if (call.kind === 'budget') return budgetWait(call, now);
  const answer =
    provider === 'http'
      ? `anyone with the service's API key answers it: POST /api/approvals/${call.callId} or agentic approvals approve|deny ${call.callId}`
      : `the ${provider} approval provider decides it`;
  return {
    reason: WAIT_REASONS.APPROVAL,
    message:
      `tool call ${call.toolName} (${call.callId}) has waited ${duration(now - call.requestedAt)} for approval; ${answer}` +
      (call.expiresAt === undefined ? '' : `; denied at ${iso(call.expiresAt)} if nobody answers`),
    call_id: call.callId,
    tool_name: call.toolName,
    since: iso(call.requestedAt),
    ...(call.expiresAt === undefined ? {} : { expires_at: iso(call.expiresAt) }),
    answer,
  };
}

/** The wait of a human step whose question `call` waits for an answer. */
function inputWait(call: PendingRequest, now: number): StepWait {
  const answer = `anyone with the service's API key answers it: POST /api/approvals/${call.callId} {"answer": {...}} matching its schema, or agentic approvals answer ${call.callId} '<json>'`;
  const prompt = call.prompt ?? '';
  return {
    reason: WAIT_REASONS.INPUT,
    message:
      `question ${call.callId} has waited ${duration(now - call.requestedAt)} for an answer: "${prompt}"; ${answer}` +
      (call.expiresAt === undefined
        ? '; it waits until answered or the run ends'
        : `; the step times out at ${iso(call.expiresAt)}`),
    call_id: call.callId,
    prompt,
    since: iso(call.requestedAt),
    ...(call.expiresAt === undefined ? {} : { expires_at: iso(call.expiresAt) }),
    answer,
  };
}

/** The wait of a step whose model call waits for its run's budget to be raised (`call`). */
function budgetWait(call: PendingRequest, now: number): StepWait {
  const limits = limitsToWire(call.budget ?? {});
  const spent = call.spent ?? { tokens: 0, costUsd: null };
  const answer = `anyone with the service's API key raises it: POST /api/approvals/${call.callId} {"budget": {"max_tokens": …, "max_cost_usd": …}}, or agentic approvals raise ${call.callId} --tokens N --usd X; {"decision": "deny"} stops the run`;
  return {
    reason: WAIT_REASONS.BUDGET,
    message: `the run paused at its budget ${duration(now - call.requestedAt)} ago (spent ${spent.tokens} tokens${spent.costUsd === null ? '' : ` and $${spent.costUsd}`}; budget ${JSON.stringify(limits)}); ${answer}`,
    call_id: call.callId,
    since: iso(call.requestedAt),
    answer,
  };
}

function breakerWait(tier: number, held: readonly HeldBreaker[]): StepWait {
  const words = held.map((b) =>
    b.state === 'open'
      ? `${b.model} is open (a trial call in ${duration(b.retryInMs)})`
      : `${b.model} is half-open (a trial call is under way)`,
  );
  return {
    reason: WAIT_REASONS.CIRCUIT_OPEN,
    message: `the circuit breaker of ${held.length === 1 ? 'model' : 'models'} ${list(words)} on tier ${tier}: calls to ${held.length === 1 ? 'it' : 'them'} are refused meanwhile`,
    tier,
    breakers: held.map((b) => ({
      model: b.model,
      state: b.state,
      retry_in_ms: Math.round(b.retryInMs),
    })),
  };
}

/** What one step that has not succeeded waits for. */
function stepWaits(
  step: StepFacts,
  facts: EngineFacts,
  workflow: CompiledWorkflow,
  context: ExplainContext,
): StepWait[] {
  // Engine times (attempt starts, retry timers) are by the run's clock, approvals by the wall's.
  const now = facts.now;
  const waits: StepWait[] = [];
  const compiled = workflow.steps[step.index];
  switch (step.status) {
    case 'pending':
      if (step.waitingFor.length > 0) {
        waits.push({
          reason: WAIT_REASONS.DEPENDENCIES,
          message: `waits for ${list(step.waitingFor.map((d) => `${d.step} (${d.status})`))} to finish`,
          dependencies: step.waitingFor.map((d) => ({ step: d.step, status: d.status })),
        });
      } else if (step.ready && facts.running >= facts.maxConcurrency) {
        waits.push({
          reason: WAIT_REASONS.CONCURRENCY_LIMIT,
          message: `ready, but the run already runs ${facts.running} ${facts.running === 1 ? 'step' : 'steps'}, its limit (max_concurrency ${facts.maxConcurrency}); it starts when one finishes`,
          running_steps: facts.running,
          max_concurrency: facts.maxConcurrency,
        });
      }
      break;
    case 'running':
    case 'awaiting_approval':
    case 'awaiting_input': {
      const since = step.attemptStartedAt ?? now;
      waits.push({
        reason: WAIT_REASONS.RUNNING,
        message: `attempt ${step.attempt} of ${step.maxAttempts} has been running for ${duration(now - since)} (agent ${compiled?.agent ?? '?'})`,
        attempt: step.attempt,
        max_attempts: step.maxAttempts,
        since: iso(since),
      });
      break;
    }
    case 'retrying': {
      const at = step.retryAt ?? now;
      waits.push({
        reason: WAIT_REASONS.RETRY_BACKOFF,
        message: `attempt ${step.attempt} of ${step.maxAttempts} failed; the next one starts in ${duration(at - now)} (backoff, at ${iso(at)})`,
        attempt: step.attempt,
        max_attempts: step.maxAttempts,
        retry_at: iso(at),
        retry_in_ms: Math.max(0, Math.round(at - now)),
      });
      break;
    }
    case 'skipped': {
      const when = workflow.document.steps[step.index]?.when;
      waits.push(
        step.conditionValues !== null && when !== undefined
          ? conditionWait(String(when), step.conditionValues, 'run')
          : endedWait('skipped', step.skipReason),
      );
      break;
    }
    case 'failed':
      waits.push(endedWait('failed', step.error));
      break;
    case 'success':
      break;
    default: {
      const unknown: never = step.status;
      throw new Error(`unknown step status ${String(unknown)}`);
    }
  }
  const unfinished = step.status !== 'failed' && step.status !== 'skipped';
  const breakers = context.breakers;
  if (unfinished && compiled !== undefined && compiled.tier > 0 && breakers !== undefined) {
    const held = breakers(compiled.tier, compiled.model);
    if (held.length > 0) waits.push(breakerWait(compiled.tier, held));
  }
  for (const call of context.approvals ?? []) {
    if (call.step === step.name && unfinished)
      waits.unshift(approvalWait(call, context.approvalProvider ?? 'http', context.now));
  }
  return waits;
}

/** The explanation of a run active in this process, from its engine's facts. */
export function explainActiveRun(
  active: ActiveRunFacts,
  context: ExplainContext,
): RunExplanationResponse {
  const { facts, workflow } = active;
  // Both engines report a step whose tool call waits as awaiting_approval (the shared core tracks
  // the waits); the pending requests say the same, also for a call the engine has not yet heard
  // of, and a question to a person reads awaiting_input.
  const asking = new Map((context.approvals ?? []).map((call) => [call.step, call.kind]));
  const steps: StepExplanation[] = facts.steps.map((step) => {
    const explained: StepExplanation = {
      step: step.name,
      status:
        (step.status === 'running' || step.status === 'awaiting_approval') && asking.has(step.name)
          ? ASKING_STATUS[asking.get(step.name) ?? 'tool']
          : step.status,
      waits: stepWaits(step, facts, workflow, context),
    };
    const items = step.status === 'running' ? active.items?.get(step.name) : undefined;
    if (items !== undefined) addItems(explained, items);
    return explained;
  });
  const open = steps.filter((s) => s.status !== 'failed' && s.status !== 'skipped');
  const said = open.map(
    (s) => `${s.step} ${s.waits.map((w) => PHRASES[w.reason]).join(' and ') || 'waits'}`,
  );
  const paused = [...asking.values()].includes('budget');
  return {
    run_id: facts.runId,
    workflow: facts.workflow,
    status: 'running',
    reason: paused ? 'awaiting_budget' : 'running',
    source: 'engine',
    message:
      `Run ${facts.runId} (${facts.workflow}) is ${paused ? 'paused at its budget' : 'running'}: ${facts.finished} of ${facts.total} steps finished` +
      (said.length === 0 ? '.' : `; ${said.join('; ')}.`),
    running_steps: facts.running,
    max_concurrency: facts.maxConcurrency,
    steps,
  };
}

/** A running map step's item counts, and the running wait saying them (docs/explain.md). */
function addItems(step: StepExplanation, progress: Readonly<MapProgress>): void {
  const { total, done, failed, running } = progress;
  const pending = Math.max(0, total - done - failed - running);
  step.items = { total, done, failed, running, pending };
  const wait = step.waits.find((w) => w.reason === WAIT_REASONS.RUNNING);
  if (wait !== undefined)
    wait.message += `; items: ${done} of ${total} done, ${failed} failed, ${running} running, ${pending} pending`;
}

/**
 * What the engine of a run actor knows, read from the actor's snapshot: its `engine` child's
 * snapshot holds the scheduler core (both engines). A run whose engine is not running (starting,
 * or writing its end record) has no step facts.
 */
export function activeRunFacts(actor: RunActor): ActiveRunFacts {
  const snapshot = actor.getSnapshot();
  const input = snapshot.context.engineInput;
  const engine = runEngineOf(snapshot);
  const source = engineFactSource(engine?.getSnapshot());
  const total = input.workflow.steps.length;
  const facts: EngineFacts = source?.facts() ?? {
    runId: input.runId,
    workflow: input.workflow.name,
    now: input.clock.now(),
    running: 0,
    maxConcurrency: input.maxConcurrency,
    finished: snapshot.context.engineOutput === null ? 0 : total,
    total,
    steps: [],
  };
  return { facts, workflow: input.workflow };
}

/** The breakers of a tier router, as {@link BreakerLookup} (models never tried have none). */
export function routerBreakers(
  router: Pick<LlmRouter, 'candidates' | 'breakerStates' | 'breakerRetryInMs'>,
): BreakerLookup {
  return (tier, model) => {
    const states = router.breakerStates();
    if (states.length === 0) return [];
    const known = new Map(states.map((entry) => [entry.model, entry.state]));
    const held: HeldBreaker[] = [];
    for (const candidate of router.candidates(tier, model)) {
      const state = known.get(candidate);
      if (state === 'open' || state === 'half_open')
        held.push({ model: candidate, state, retryInMs: router.breakerRetryInMs(candidate) });
    }
    return held;
  };
}
