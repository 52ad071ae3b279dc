import { errorMessage } from '../errors.js';
import type { ApprovalDecision, ApprovalProvider, ApprovalRequest } from './approval.js';

/** Told about every approval a provider is asked for (the runtime turns these into events). */
export interface ApprovalObserver {
  required(request: ApprovalRequest): void;
  decided(request: ApprovalRequest, decision: ApprovalDecision, provider: string): void;
}

/**
 * `provider` with every question and answer reported to `observer` (`approval_required`,
 * `approval_decision`), whichever provider it is. A provider that throws denies (fail-closed).
 */
export function observeApprovals(
  provider: ApprovalProvider,
  observer: ApprovalObserver,
): ApprovalProvider {
  return {
    name: provider.name,
    decide: async (request) => {
      let decision: ApprovalDecision;
      let reported = false;
      try {
        // Asked first, reported right after (same tick): a provider that queues the call has
        // it listed before anyone can see the event and answer it.
        const answer = provider.decide(request);
        observer.required(request);
        reported = true;
        decision = await answer;
      } catch (error) {
        if (!reported) observer.required(request);
        decision = {
          approved: false,
          reason: `approval provider ${provider.name} failed: ${errorMessage(error)}`,
        };
      }
      observer.decided(request, decision, provider.name);
      return decision;
    },
  };
}
