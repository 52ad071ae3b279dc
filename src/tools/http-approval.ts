import type { ApprovalDecision, ApprovalProvider, ApprovalRequest } from './approval.js';

/** AGENTIC_APPROVAL_TIMEOUT_SECONDS' default, in ms: how long a call waits for a person. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

/** Decided call ids remembered for the 409 of a second answer (oldest forgotten first). */
const DECIDED_MEMORY = 1000;

/** A call waiting for a decision (`GET /api/approvals`). */
export interface PendingApproval {
  callId: string;
  runId: string;
  workflow: string;
  step: string;
  toolName: string;
  args: Record<string, unknown>;
  /** Epoch ms. */
  requestedAt: number;
  /** Epoch ms: denied when nobody answers by then. */
  expiresAt: number;
}

/** What answering a call did: `unknown` (404) and `already_decided` (409) changed nothing. */
export type ApprovalAnswer = 'decided' | 'unknown' | 'already_decided';

/**
 * The `http` provider: every high-risk call waits until someone answers it through
 * `POST /api/approvals/{call_id}`, the timeout passes (denied), or the run is cancelled
 * (denied). It holds the pending calls of one runtime.
 */
export interface ApprovalQueue extends ApprovalProvider {
  /** The calls waiting now, oldest first. */
  pending(): PendingApproval[];
  /** Approves or denies a waiting call. */
  answer(callId: string, approve: boolean, reason?: string): ApprovalAnswer;
}

export interface HttpApprovalOptions {
  /** AGENTIC_APPROVAL_TIMEOUT_SECONDS in ms. @default 300000 */
  timeoutMs?: number;
  /** Epoch ms (tests). @default Date.now */
  now?: () => number;
}

interface Waiting {
  info: PendingApproval;
  settle: (decision: ApprovalDecision) => void;
}

/**
 * The `http` provider (AGENTIC_APPROVAL_PROVIDER=http): one per runtime, holding its pending
 * calls in memory. Every way a wait ends (answer, timeout, cancellation) settles it exactly once.
 */
export function createHttpApprovalProvider(options: HttpApprovalOptions = {}): ApprovalQueue {
  const timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  const waiting = new Map<string, Waiting>();
  // A Set keeps insertion order: the first entry is the oldest decision.
  const decided = new Set<string>();

  function remember(callId: string): void {
    decided.add(callId);
    if (decided.size > DECIDED_MEMORY) {
      const oldest = decided.values().next().value;
      if (oldest !== undefined) decided.delete(oldest);
    }
  }

  function decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    const { signal } = request;
    if (signal.aborted) {
      return Promise.resolve({ approved: false, reason: 'run cancelled before approval' });
    }
    const requestedAt = now();
    return new Promise<ApprovalDecision>((resolve) => {
      const settle = (decision: ApprovalDecision): void => {
        if (!waiting.delete(request.callId)) return;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        remember(request.callId);
        resolve(decision);
      };
      const onAbort = (): void =>
        settle({ approved: false, reason: 'run cancelled while waiting for approval' });
      const seconds = timeoutMs / 1000;
      const timer = setTimeout(
        () => settle({ approved: false, reason: `no decision within ${seconds}s (timed out)` }),
        timeoutMs,
      );
      // A pending approval alone must not keep the process alive; runs and shutdown end it.
      timer.unref();
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.set(request.callId, {
        info: {
          callId: request.callId,
          runId: request.runId,
          workflow: request.workflow,
          step: request.step,
          toolName: request.toolName,
          args: request.args,
          requestedAt,
          expiresAt: requestedAt + timeoutMs,
        },
        settle,
      });
    });
  }

  return {
    name: 'http',
    decide,
    pending: () => [...waiting.values()].map((entry) => entry.info),
    answer: (callId, approve, reason) => {
      const entry = waiting.get(callId);
      if (entry === undefined) return decided.has(callId) ? 'already_decided' : 'unknown';
      entry.settle({
        approved: approve,
        reason: reason ?? (approve ? 'approved over HTTP' : 'denied over HTTP'),
      });
      return 'decided';
    },
  };
}

/** Whether `provider` is an {@link ApprovalQueue} (answers calls over HTTP). */
export function isApprovalQueue(provider: ApprovalProvider): provider is ApprovalQueue {
  return typeof (provider as Partial<ApprovalQueue>).answer === 'function';
}
