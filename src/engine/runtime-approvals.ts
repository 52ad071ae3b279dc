/**
 * A runtime's approval gate: the provider chosen by its tool options, observed so every
 * question and answer becomes an `approval_required` / `approval_decision` event of the run,
 * and the pending calls of the `http` provider for `GET/POST /api/approvals`, listed with the
 * questions of its runs' human steps (kinds/human-inbox.ts), answered through the same endpoint.
 */
import type { ApprovalEventFields } from '../events/event-mapper.js';
import {
  builtInApprovalProvider,
  isApprovalQueue,
  observeApprovals,
  type ApprovalAnswer,
  type PendingApproval,
  type ToolsOptions,
} from '../tools/index.js';
import { HUMAN_LABEL } from '../workflow/step-kinds.js';
import { createHumanInbox, type HumanInbox, type InputAnswer } from './kinds/human-inbox.js';
import { BUDGET_LABEL, type BudgetAnswer, type BudgetGate } from './budget/budget-gate.js';
import type { BudgetLimits, Spend } from './budget/budget-limits.js';

/**
 * A request waiting for a person: a high-risk tool call (approved or denied), a human step's
 * question (`kind: 'input'`, answered with an object matching `schema`; `toolName` is `human`,
 * `args` empty, `expiresAt` undefined when the step has no timeout), or a run paused at its
 * budget (`kind: 'budget'`, raised with new limits; `toolName` is `budget`, docs/budgets.md).
 */
export interface PendingRequest extends Omit<PendingApproval, 'expiresAt'> {
  /** Epoch ms: when the request ends unanswered; undefined: not before its run ends. */
  expiresAt: number | undefined;
  kind?: 'input' | 'budget';
  /** A budget request: what its run has spent. */
  spent?: Spend;
  /** A budget request: the limits its run reached. */
  budget?: BudgetLimits;
  /** A question's prompt, rendered. */
  prompt?: string;
  /** The JSON Schema a question's answer must match. */
  schema?: Record<string, unknown>;
}

/**
 * What answering a request did: `decided`, `unknown` (404), `already_decided` (409), or
 * `invalid` (422, nothing changed: an answer that does not match the question's schema, or the
 * wrong kind of answer: a decision for a question, an answer for a tool call).
 */
export type RequestAnswer = ApprovalAnswer | InputAnswer | BudgetAnswer;

/** Pending tool calls and human steps' questions, and their answers (docs/tools.md, "Approval"). */
export interface RuntimeApprovals {
  /** The provider's name (`deny`, `auto`, `policy`, `http` or an embedder's). */
  readonly provider: string;
  /**
   * Requests waiting for a person, oldest first: tool calls (only when the provider answers over
   * HTTP) and human steps' questions (whatever the provider).
   */
  pending(): PendingRequest[];
  /** Approves or denies a waiting tool call; `unknown` for ids never pending here. */
  answer(callId: string, approve: boolean, reason?: string): RequestAnswer;
  /** Answers a human step's waiting question with `answer` (checked against its schema). */
  respond(id: string, answer: unknown): RequestAnswer;
  /** Raises the budget of a run paused at it (each limit above what the run has spent). */
  raise(id: string, limits: BudgetLimits): Promise<RequestAnswer>;
  /** Whether tool arguments are shown in events and listings (AGENTIC_APPROVAL_EVENT_ARGUMENTS). */
  readonly showArguments: boolean;
}

/** The tool options with the observed provider, and the runtime's view of pending calls. */
export function createRuntimeApprovals(
  tools: ToolsOptions | undefined,
  emit: (runId: string, event: ApprovalEventFields) => void,
  budgets?: BudgetGate,
): { tools: ToolsOptions; approvals: RuntimeApprovals; inputs: HumanInbox } {
  const options = tools ?? {};
  const provider =
    typeof options.approval === 'object'
      ? options.approval
      : builtInApprovalProvider(
          options.approval ?? 'deny',
          options.approvalAllowedTools,
          options.approvalTimeoutMs,
        );
  const queue = isApprovalQueue(provider) ? provider : undefined;
  const showArguments = options.approvalEventArguments ?? false;
  const observed = observeApprovals(provider, {
    required(request) {
      const expires = queue?.pending().find((entry) => entry.callId === request.callId);
      emit(request.runId, {
        type: 'approval_required',
        step: request.step,
        tool_name: request.toolName,
        call_id: request.callId,
        ...(showArguments ? { arguments: request.args } : {}),
        ...(expires === undefined ? {} : { expires_at: new Date(expires.expiresAt).toISOString() }),
      });
    },
    decided(request, decision, name) {
      emit(request.runId, {
        type: 'approval_decision',
        step: request.step,
        tool_name: request.toolName,
        call_id: request.callId,
        decision: decision.approved ? 'approve' : 'deny',
        provider: name,
        reason: decision.reason,
      });
    },
  });
  const inputs = createHumanInbox();
  const questions = (): PendingRequest[] =>
    inputs.pending().map((entry) => ({
      callId: entry.id,
      runId: entry.runId,
      workflow: entry.workflow,
      step: entry.step,
      toolName: HUMAN_LABEL,
      args: {},
      requestedAt: entry.requestedAt,
      expiresAt: entry.expiresAt,
      kind: 'input',
      prompt: entry.prompt,
      schema: entry.schema,
    }));
  const paused = (): PendingRequest[] =>
    (budgets?.pending() ?? []).map((entry) => ({
      callId: entry.id,
      runId: entry.runId,
      workflow: entry.workflow,
      step: entry.step,
      toolName: BUDGET_LABEL,
      args: {},
      requestedAt: entry.requestedAt,
      expiresAt: undefined,
      kind: 'budget',
      spent: entry.spent,
      budget: entry.limits,
    }));
  const isBudget = (id: string): boolean => budgets?.has(id) === true;
  return {
    tools: { ...options, approval: observed },
    inputs,
    approvals: {
      provider: provider.name,
      showArguments,
      pending() {
        const calls: PendingRequest[] = queue?.pending() ?? [];
        const budgetsPaused = budgets?.pending().length ?? 0;
        if (!inputs.hasPending() && budgetsPaused === 0) return calls;
        return [...calls, ...questions(), ...paused()].sort(
          (x, y) => x.requestedAt - y.requestedAt,
        );
      },
      answer(callId, approve, reason) {
        if (inputs.has(callId)) return { invalid: questionNeedsAnswer(callId) };
        if (isBudget(callId)) {
          // Deny stops the run at its budget; an approval needs the new limits.
          return approve ? { invalid: budgetNeedsLimits(callId) } : budgets!.deny(callId, reason);
        }
        if (budgets?.ended(callId) === true) return 'already_decided';
        const outcome = queue === undefined ? 'unknown' : queue.answer(callId, approve, reason);
        return outcome === 'unknown' && inputs.ended(callId) ? 'already_decided' : outcome;
      },
      respond(id, answer) {
        if (!inputs.has(id) && queue?.pending().some((call) => call.callId === id) === true) {
          return {
            invalid: `tool call ${id} waits for a decision: send {"decision": "approve"} or {"decision": "deny"}, not an answer`,
          };
        }
        if (isBudget(id)) return { invalid: budgetNeedsLimits(id) };
        return inputs.answer(id, answer);
      },
      async raise(id, limits) {
        if (budgets === undefined) return 'unknown';
        if (!isBudget(id) && (inputs.has(id) || queue?.pending().some((c) => c.callId === id))) {
          return {
            invalid: `request ${id} is not a run paused at its budget: send {"decision": ...} for a tool call or {"answer": {...}} for a question`,
          };
        }
        return budgets.raise(id, limits);
      },
    },
  };
}

/** The 422 of an answer or an approval sent to a run paused at its budget. */
function budgetNeedsLimits(id: string): string {
  return `request ${id} is a run paused at its budget: send {"budget": {"max_tokens": …, "max_cost_usd": …}} to raise it, or {"decision": "deny"} to stop the run`;
}

/** The 422 of a decision sent to a human step's question. */
function questionNeedsAnswer(id: string): string {
  return `request ${id} is a human step's question: send {"answer": {...}} matching its schema, not a decision`;
}
