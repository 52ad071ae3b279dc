/**
 * A runtime's approval gate: the provider chosen by its tool options, observed so every
 * question and answer becomes an `approval_required` / `approval_decision` event of the run,
 * and the pending calls of the `http` provider for `GET/POST /api/approvals`.
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

/** Pending tool calls and their answers (docs/tools.md, "Approval"). */
export interface RuntimeApprovals {
  /** The provider's name (`deny`, `auto`, `policy`, `http` or an embedder's). */
  readonly provider: string;
  /** Calls waiting for a person, oldest first (empty unless the provider answers over HTTP). */
  pending(): PendingApproval[];
  /** Approves or denies a waiting call; `unknown` for ids never pending here. */
  answer(callId: string, approve: boolean, reason?: string): ApprovalAnswer;
  /** Whether tool arguments are shown in events and listings (AGENTIC_APPROVAL_EVENT_ARGUMENTS). */
  readonly showArguments: boolean;
}

/** The tool options with the observed provider, and the runtime's view of pending calls. */
export function createRuntimeApprovals(
  tools: ToolsOptions | undefined,
  emit: (runId: string, event: ApprovalEventFields) => void,
): { tools: ToolsOptions; approvals: RuntimeApprovals } {
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
  return {
    tools: { ...options, approval: observed },
    approvals: {
      provider: provider.name,
      showArguments,
      pending: () => queue?.pending() ?? [],
      answer: (callId, approve, reason) =>
        queue === undefined ? 'unknown' : queue.answer(callId, approve, reason),
    },
  };
}
