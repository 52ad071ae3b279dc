import { AppError, ERROR_CODES } from '../errors.js';
import { createHttpApprovalProvider, DEFAULT_APPROVAL_TIMEOUT_MS } from './http-approval.js';

/** What an approval provider is asked about. */
export interface ApprovalRequest {
  /** Unique id of this call (`call_id` on the wire and in `POST /api/approvals/{call_id}`). */
  callId: string;
  toolName: string;
  args: Record<string, unknown>;
  workflow: string;
  step: string;
  runId: string;
  /** Aborted when the run is cancelled or times out: a provider that waits for a person stops. */
  signal: AbortSignal;
}

export interface ApprovalDecision {
  approved: boolean;
  /** Why, recorded with a refusal. */
  reason: string;
}

/** Decides whether a high-risk tool call may run (spec, Safety controls 4). */
export interface ApprovalProvider {
  readonly name: string;
  decide(request: ApprovalRequest): Promise<ApprovalDecision>;
}

/** The built-in providers, by their AGENTIC_APPROVAL_PROVIDER value. */
export const APPROVAL_PROVIDERS = ['deny', 'auto', 'policy', 'http'] as const;
export type ApprovalProviderName = (typeof APPROVAL_PROVIDERS)[number];

/**
 * Fail-closed default: a tool that needs consent is denied when approval is required and no
 * approval provider is registered.
 */
export const autoDenyProvider: ApprovalProvider = {
  name: 'deny',
  decide: (request) =>
    Promise.resolve({
      approved: false,
      reason: `${request.toolName} needs approval and no approval provider approves it (AGENTIC_APPROVAL_PROVIDER=deny)`,
    }),
};

/** Approves every call: for trusted, unattended deployments. */
export const autoApproveProvider: ApprovalProvider = {
  name: 'auto',
  decide: () =>
    Promise.resolve({ approved: true, reason: 'approved by AGENTIC_APPROVAL_PROVIDER=auto' }),
};

/**
 * Approves the tools named in `allowed` (AGENTIC_APPROVAL_ALLOWED_TOOLS), either bare
 * (`file_write`, any workflow) or as `workflow:tool`; denies the rest.
 */
export function createPolicyApprovalProvider(allowed: readonly string[]): ApprovalProvider {
  const set = new Set(allowed);
  return {
    name: 'policy',
    decide: (request) => {
      const approved =
        set.has(request.toolName) || set.has(`${request.workflow}:${request.toolName}`);
      return Promise.resolve({
        approved,
        reason: approved
          ? `approved by policy (AGENTIC_APPROVAL_ALLOWED_TOOLS)`
          : `${request.toolName} is not in the approval policy (AGENTIC_APPROVAL_ALLOWED_TOOLS)`,
      });
    },
  };
}

/** The built-in provider called `name`. */
export function builtInApprovalProvider(
  name: string,
  allowedTools: readonly string[] = [],
  timeoutMs = DEFAULT_APPROVAL_TIMEOUT_MS,
): ApprovalProvider {
  switch (name) {
    case 'http':
      return createHttpApprovalProvider({ timeoutMs });
    case 'deny':
      return autoDenyProvider;
    case 'auto':
      return autoApproveProvider;
    case 'policy':
      return createPolicyApprovalProvider(allowedTools);
    default:
      throw new AppError(
        ERROR_CODES.CONFIG,
        `unknown approval provider '${name}' (${APPROVAL_PROVIDERS.join(', ')})`,
      );
  }
}
