/**
 * The budget gate (docs/budgets.md): an {@link LlmClient} in front of the runtime's model client
 * that holds every model call of a run with a budget to that run's {@link BudgetLedger}. Before a
 * call it steps the call's tier down once the run has spent its step-down share, reserves the
 * call's worst case (its prompt's bytes as input tokens, `callMaxTokens` of output, priced at the
 * dearest model it may go to) and waits while calls in flight hold the rest of the budget; at the
 * budget it fails the call (`budget_exceeded`, policy `fail`) or pauses the run until a person
 * raises the budget (policy `pause`: announced with `approval_required` kind `budget`, listed in
 * `GET /api/approvals`). After the call it charges what the call used and releases the reserve.
 *
 * A run's ledger is shared by its steps, its map items and its sub-workflow child runs (they
 * `join` it under the parent's step); the model calls carry their run id (`LlmRequest.caller`).
 */
import { AppError, ERROR_CODES } from '../../errors.js';
import type { ApprovalEventFields } from '../../events/event-mapper.js';
import type { Logger } from '../../log.js';
import {
  spentTokens,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
  type TokenUsage,
} from '../../llm/types.js';
import { BudgetLedger, type CallCost, type Reservation } from './budget-ledger.js';
import {
  budgetExtra,
  budgetRequestId,
  describeReached,
  limitsToWire,
  spendToWire,
  type BudgetLimits,
  type RunBudget,
  type Spend,
} from './budget-limits.js';

/** The US dollar cost of a call of `model` (`provider:model`) using `usage`; null: no price. */
export type CallPricer = (model: string, usage: TokenUsage) => number | null;

/** The `tool_name` of a budget request (`approval_required` kind `budget`, the approvals list). */
export const BUDGET_LABEL = 'budget';

/** A run paused at its budget, waiting for a person to raise it. */
export interface PendingBudget {
  /** The request id (`call_id` on the wire): the same for the same run and limits after a restart. */
  id: string;
  runId: string;
  workflow: string;
  /** The step whose model call waits first (of the run, or the step running the child run). */
  step: string;
  /** Epoch ms. */
  requestedAt: number;
  spent: Spend;
  limits: BudgetLimits;
}

/**
 * What answering a budget request did: `decided`, `unknown` (404), `already_decided` (409: raised
 * or denied already, or its run ended) or `invalid` (422, nothing changed).
 */
export type BudgetAnswer = 'decided' | 'unknown' | 'already_decided' | { invalid: string };

export interface BudgetGateOptions {
  /** Output tokens a call of a budgeted run may produce (sent as its max_tokens). */
  callMaxTokens: number;
  /** Prices calls. @default no prices (a cost limit then holds nothing back) */
  price?: CallPricer | undefined;
  /** The models a call of `tier` (pinned to `model`) may go to: its worst-case cost. @default none */
  candidates?: ((tier: number, model?: string) => readonly string[]) | undefined;
  /** Epoch ms. */
  now: () => number;
  /** Hands an `approval_required` / `approval_decision` to run `runId`'s events. */
  emit: (runId: string, event: ApprovalEventFields) => void;
  /** Makes a raise durable before it applies (a resumed run keeps it). @default not kept */
  saveRaise?: ((runId: string, limits: BudgetLimits) => Promise<void>) | undefined;
  logger: Logger;
}

export interface BudgetGate {
  /** `llm` with every call of a budgeted run held to its budget. */
  wrap(llm: LlmClient): LlmClient;
  /**
   * Run `runId` has `budget`; `seed` is what it had spent (a resumed run's records); its
   * `extra.budget` is kept up to date in `extra`.
   */
  open(
    runId: string,
    workflow: string,
    budget: RunBudget,
    extra: Record<string, unknown>,
    seed?: Spend,
  ): void;
  /**
   * Child run `childRunId` of `parentRunId`'s step `step` spends from its parent's budget (`seed`
   * is added: a resumed child's records). False when the parent has no budget.
   */
  join(childRunId: string, parentRunId: string, step: string, seed?: Spend): boolean;
  /** Run `runId` ended: its pause (if any) ends unanswered and its ledger goes. */
  close(runId: string): void;
  /** Runs paused at their budget, oldest first. */
  pending(): PendingBudget[];
  /** Whether request `id` waits here. */
  has(id: string): boolean;
  /** Whether request `id` waited here and ended (the last 1,000 ended are kept). */
  ended(id: string): boolean;
  /** Raises a paused run's budget: each limit given must be above what the run has spent. */
  raise(id: string, limits: BudgetLimits): Promise<BudgetAnswer>;
  /** Refuses to raise it: the run's waiting calls fail with `budget_exceeded`. */
  deny(id: string, reason?: string): BudgetAnswer;
}

interface RunBudgetState {
  runId: string;
  workflow: string;
  ledger: BudgetLedger;
  extra: Record<string, unknown>;
  pause: PendingBudget | undefined;
  /** A denied raise: every call of the run fails with this. */
  stopped: string | undefined;
}

/** A run spending from a budget: its own, or (a child run) its parent's under a step. */
interface Member {
  state: RunBudgetState;
  step: string | undefined;
}

/** Ended request ids remembered for the 409 of a late answer (oldest forgotten first). */
const ENDED_MEMORY = 1000;

/** Tokens counted per message beside its bytes (role and framing). */
const MESSAGE_OVERHEAD_TOKENS = 16;

export function createBudgetGate(options: BudgetGateOptions): BudgetGate {
  const members = new Map<string, Member>();
  const pauses = new Map<string, RunBudgetState>();
  const ended = new Set<string>();
  const log = options.logger;

  function endRequest(id: string): void {
    if (!pauses.delete(id)) return;
    ended.add(id);
    if (ended.size > ENDED_MEMORY) {
      const oldest = ended.values().next().value;
      if (oldest !== undefined) ended.delete(oldest);
    }
  }

  function record(state: RunBudgetState): void {
    state.extra.budget = budgetExtra(state.ledger.budget, state.ledger.spent);
  }

  /** The dearest the call can cost: its candidates' highest price for its worst-case usage. */
  function worstCase(request: LlmRequest, maxTokens: number): CallCost {
    const input = inputBound(request);
    const usage = { input, output: maxTokens, total: input + maxTokens };
    let costUsd: number | null = null;
    const price = options.price;
    if (price !== undefined) {
      const models = options.candidates?.(request.tier, request.model) ?? [];
      for (const model of models) {
        const cost = price(model, usage);
        if (cost !== null) costUsd = Math.max(costUsd ?? 0, cost);
      }
    }
    return { tokens: usage.total, costUsd };
  }

  /** What a call used: its tokens, and its cost (as the client priced it, else priced here). */
  function used(model: string | undefined, usage: TokenUsage | null): CallCost | null {
    if (usage === null) return null;
    if (usage.costUsd !== undefined) return { tokens: usage.total, costUsd: usage.costUsd };
    const costUsd =
      model === undefined || options.price === undefined ? null : options.price(model, usage);
    return { tokens: usage.total, costUsd };
  }

  function pause(state: RunBudgetState, step: string): void {
    if (state.pause !== undefined) return;
    const limits = state.ledger.budget.limits;
    const spent = state.ledger.spent;
    const id = budgetRequestId(state.runId, limits);
    ended.delete(id);
    state.pause = {
      id,
      runId: state.runId,
      workflow: state.workflow,
      step,
      requestedAt: options.now(),
      spent,
      limits,
    };
    pauses.set(id, state);
    log.info(
      { runId: state.runId, step, spent: spendToWire(spent), budget: limitsToWire(limits) },
      'run paused at its budget',
    );
    options.emit(state.runId, {
      type: 'approval_required',
      step,
      tool_name: BUDGET_LABEL,
      call_id: id,
      kind: 'budget',
      spent: spendToWire(spent),
      budget: limitsToWire(limits),
    });
  }

  /**
   * Waits until the call may start (room in the budget) and reserves its worst case in the same
   * turn as it finds the room (concurrent calls each see the others' reserves); throws at the
   * budget by policy.
   */
  async function admit(member: Member, request: LlmRequest, worst: CallCost): Promise<Reservation> {
    const { state } = member;
    const ledger = state.ledger;
    for (;;) {
      if (state.stopped !== undefined) throw exceeded(state.stopped);
      if (ledger.reached()) {
        const why = `the run has spent ${describeReached(ledger.budget.limits, ledger.spent)}`;
        if (ledger.budget.onExceeded === 'fail') throw exceeded(why);
        pause(state, member.step ?? request.caller?.step ?? '');
      } else if (ledger.hasRoom()) return ledger.reserve(worst);
      await ledger.changed(request.signal);
    }
  }

  function wrap(llm: LlmClient): LlmClient {
    return {
      async complete(request: LlmRequest): Promise<LlmResponse> {
        const runId = request.caller?.runId;
        const member = runId === undefined ? undefined : members.get(runId);
        if (member === undefined) return llm.complete(request);
        const { state } = member;
        const ledger = state.ledger;
        const budget = ledger.budget;
        // One tier lower once the run has spent its step-down share; a pinned model stays, and
        // so does a step whose lower tier has no chain (when the candidates are known).
        const lower = request.tier - 1;
        const tier =
          request.model === undefined &&
          lower >= 1 &&
          ledger.share() >= budget.stepDownAt &&
          (options.candidates === undefined || options.candidates(lower).length > 0)
            ? lower
            : request.tier;
        const maxTokens = Math.min(request.maxTokens ?? Infinity, options.callMaxTokens);
        const call: LlmRequest = { ...request, tier, maxTokens };
        const reservation = await admit(member, call, worstCase(call, maxTokens));
        try {
          const response = await llm.complete(call);
          ledger.settle(reservation, used(response.model, response.tokensUsed));
          return response;
        } catch (error) {
          ledger.settle(reservation, used(undefined, spentTokens(error)));
          throw error;
        } finally {
          record(state);
        }
      },
    };
  }

  return {
    wrap,
    open(runId, workflow, budget, extra, seed) {
      const state: RunBudgetState = {
        runId,
        workflow,
        ledger: new BudgetLedger(budget, seed),
        extra,
        pause: undefined,
        stopped: undefined,
      };
      members.set(runId, { state, step: undefined });
      record(state);
    },
    join(childRunId, parentRunId, step, seed) {
      const parent = members.get(parentRunId);
      if (parent === undefined) return false;
      members.set(childRunId, { state: parent.state, step: parent.step ?? step });
      if (seed !== undefined) parent.state.ledger.charge(seed);
      return true;
    },
    close(runId) {
      const member = members.get(runId);
      if (member === undefined) return;
      members.delete(runId);
      const { state } = member;
      if (state.runId !== runId) return;
      record(state);
      if (state.pause !== undefined) endRequest(state.pause.id);
      state.pause = undefined;
    },
    pending: () =>
      [...pauses.values()]
        .map((state) => state.pause!)
        .sort((x, y) => x.requestedAt - y.requestedAt),
    has: (id) => pauses.has(id),
    ended: (id) => ended.has(id),
    async raise(id, limits) {
      const state = pauses.get(id);
      if (state === undefined) return ended.has(id) ? 'already_decided' : 'unknown';
      const ledger = state.ledger;
      const spent = ledger.spent;
      const problem = raiseProblem(ledger.budget.limits, limits, spent);
      if (problem !== undefined) return { invalid: problem };
      const raised = { ...ledger.budget.limits, ...limits };
      // Durable first: a restart right after the answer resumes the run with the raised budget.
      await options.saveRaise?.(state.runId, raised);
      if (!pauses.has(id)) return 'already_decided';
      const step = state.pause!.step;
      endRequest(id);
      state.pause = undefined;
      ledger.raise(raised);
      record(state);
      log.info({ runId: state.runId, budget: limitsToWire(raised) }, 'run budget raised');
      options.emit(state.runId, {
        type: 'approval_decision',
        step,
        tool_name: BUDGET_LABEL,
        call_id: id,
        kind: 'budget',
        decision: 'approve',
        provider: 'human',
        reason: 'budget raised',
        budget: limitsToWire(raised),
      });
      return 'decided';
    },
    deny(id, reason) {
      const state = pauses.get(id);
      if (state === undefined) return ended.has(id) ? 'already_decided' : 'unknown';
      const step = state.pause!.step;
      const why = `the run has spent ${describeReached(state.ledger.budget.limits, state.ledger.spent)} and its raise was denied${reason === undefined ? '' : `: ${reason}`}`;
      endRequest(id);
      state.pause = undefined;
      state.stopped = why;
      state.ledger.wake();
      options.emit(state.runId, {
        type: 'approval_decision',
        step,
        tool_name: BUDGET_LABEL,
        call_id: id,
        kind: 'budget',
        decision: 'deny',
        provider: 'human',
        reason: reason ?? 'budget not raised',
      });
      return 'decided';
    },
  };
}

/** The error of a call refused at the budget: its step fails with `budget_exceeded: …`. */
function exceeded(why: string): AppError {
  return new AppError(ERROR_CODES.BUDGET_EXCEEDED, `budget_exceeded: ${why}`, {
    status: 409,
    expose: true,
  });
}

/** Why `limits` do not raise a budget at `current` with `spent`; undefined when they do. */
function raiseProblem(
  current: BudgetLimits,
  limits: BudgetLimits,
  spent: Spend,
): string | undefined {
  if (limits.maxTokens === undefined && limits.maxCostUsd === undefined) {
    return 'give max_tokens and/or max_cost_usd';
  }
  if (limits.maxTokens !== undefined && limits.maxTokens <= spent.tokens) {
    return `max_tokens ${limits.maxTokens} is not above the ${spent.tokens} tokens the run has spent`;
  }
  const cost = spent.costUsd ?? 0;
  if (limits.maxCostUsd !== undefined && limits.maxCostUsd <= cost) {
    return `max_cost_usd ${limits.maxCostUsd} is not above the $${cost} the run has spent`;
  }
  const raised = { ...current, ...limits };
  if (raised.maxTokens !== undefined && raised.maxTokens <= spent.tokens) {
    return `max_tokens ${raised.maxTokens} is reached too (${spent.tokens} tokens spent): raise it as well`;
  }
  if (raised.maxCostUsd !== undefined && raised.maxCostUsd <= cost) {
    return `max_cost_usd ${raised.maxCostUsd} is reached too ($${cost} spent): raise it as well`;
  }
  return undefined;
}

/**
 * At most the tokens a call's prompt can be: one per byte (a byte-level tokenizer's worst case)
 * of its system prompt, messages and tool definitions, and a few per message.
 */
function inputBound(request: LlmRequest): number {
  let bytes = Buffer.byteLength(request.system);
  let messages = 1;
  if (request.messages === undefined) bytes += Buffer.byteLength(request.prompt);
  else {
    for (const message of request.messages) {
      messages++;
      bytes += Buffer.byteLength(message.content);
      for (const call of message.toolCalls ?? []) {
        bytes += Buffer.byteLength(call.name) + Buffer.byteLength(call.arguments);
      }
    }
  }
  if (request.tools !== undefined) bytes += Buffer.byteLength(JSON.stringify(request.tools));
  return bytes + messages * MESSAGE_OVERHEAD_TOKENS;
}
