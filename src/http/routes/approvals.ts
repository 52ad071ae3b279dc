/**
 * Human approval of high-risk tool calls (provider `http`): `GET /api/approvals` lists the
 * calls waiting, `POST /api/approvals/{call_id}` answers one. Unknown ids are 404, a call
 * already answered (or timed out, or cancelled) is 409.
 */
import type Router from '@koa/router';
import type { RunService } from '../../engine/types.js';
import { ConflictError, ERROR_CODES, NotFoundError } from '../../errors.js';
import type { ApprovalDecisionResponse } from '../../generated/api/approval-decision-response.js';
import type { ApprovalsResponse } from '../../generated/api/approvals-response.js';
import { param, requestBody } from '../context.js';
import { parseApprovalDecision } from '../request-validation.js';

export interface ApprovalRouteDeps {
  runtime: Pick<RunService, 'approvals'>;
}

export function registerApprovalRoutes(router: Router, deps: ApprovalRouteDeps): void {
  const { approvals } = deps.runtime;

  router.get('/api/approvals', async (ctx) => {
    const body: ApprovalsResponse = {
      provider: approvals.provider,
      approvals: (await approvals.pending()).map((entry) => ({
        call_id: entry.callId,
        run_id: entry.runId,
        workflow: entry.workflow,
        step: entry.step,
        tool_name: entry.toolName,
        requested_at: new Date(entry.requestedAt).toISOString(),
        expires_at: new Date(entry.expiresAt).toISOString(),
        ...(approvals.showArguments ? { arguments: entry.args } : {}),
      })),
    };
    ctx.body = body;
  });

  router.post('/api/approvals/:call_id', async (ctx) => {
    const callId = param(ctx, 'call_id');
    const request = parseApprovalDecision(requestBody(ctx));
    const outcome = await approvals.answer(callId, request.decision === 'approve', request.reason);
    if (outcome === 'unknown') {
      throw new NotFoundError(
        'No tool call waits for approval with this id',
        ERROR_CODES.APPROVAL_NOT_FOUND,
      );
    }
    if (outcome === 'already_decided') {
      throw new ConflictError(`tool call ${callId} has already been decided`);
    }
    const body: ApprovalDecisionResponse = { call_id: callId, decision: request.decision };
    ctx.body = body;
  });
}
