/**
 * Requests waiting for a person: `GET /api/approvals` lists the high-risk tool calls waiting
 * for approval (provider `http`) and the questions of human steps (`kind: "input"`, whatever the
 * provider); `POST /api/approvals/{call_id}` answers one, a tool call with a decision, a question
 * with an answer matching its schema. Unknown ids are 404, a request already answered (or timed
 * out, or cancelled) is 409, an answer that does not match (or the wrong kind of answer) is 422.
 */
import type Router from '@koa/router';
import type { RequestAnswer } from '../../engine/runtime-approvals.js';
import type { RunService } from '../../engine/types.js';
import {
  AdapterUnavailableError,
  ConflictError,
  ERROR_CODES,
  NotFoundError,
  ValidationError,
} from '../../errors.js';
import { budgetFromWire, limitsToWire, spendToWire } from '../../engine/budget/budget-limits.js';
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
        ...(entry.expiresAt === undefined
          ? {}
          : { expires_at: new Date(entry.expiresAt).toISOString() }),
        ...(approvals.showArguments && entry.kind === undefined ? { arguments: entry.args } : {}),
        ...(entry.kind === 'input'
          ? { kind: entry.kind, prompt: entry.prompt ?? '', schema: entry.schema ?? {} }
          : {}),
        ...(entry.kind === 'budget'
          ? {
              kind: entry.kind,
              spent: spendToWire(entry.spent ?? { tokens: 0, costUsd: null }),
              budget: limitsToWire(entry.budget ?? {}),
            }
          : {}),
      })),
    };
    ctx.body = body;
  });

  router.post('/api/approvals/:call_id', async (ctx) => {
    const callId = param(ctx, 'call_id');
    const request = parseApprovalDecision(requestBody(ctx));
    if (request.budget !== undefined) {
      const limits = budgetFromWire(request.budget);
      if (approvals.raise === undefined) {
        throw new AdapterUnavailableError(
          'raising a budget is not available where runs are queued to workers',
        );
      }
      const outcome = await approvals.raise(callId, limits);
      settled(outcome, callId, 'budget');
      const body: ApprovalDecisionResponse = {
        call_id: callId,
        decision: 'approve',
        budget: request.budget,
      };
      ctx.body = body;
      return;
    }
    if (request.answer !== undefined) {
      const outcome = await approvals.respond(callId, request.answer);
      settled(outcome, callId, 'answer');
      const body: ApprovalDecisionResponse = {
        call_id: callId,
        decision: 'approve',
        answer: request.answer,
      };
      ctx.body = body;
      return;
    }
    const decision = request.decision ?? 'deny';
    const outcome = await approvals.answer(callId, decision === 'approve', request.reason);
    settled(outcome, callId, 'decision');
    const body: ApprovalDecisionResponse = { call_id: callId, decision };
    ctx.body = body;
  });
}

/** Throws the 404, 409 or 422 of an answer that changed nothing. */
function settled(
  outcome: RequestAnswer,
  callId: string,
  field: 'answer' | 'decision' | 'budget',
): void {
  if (outcome === 'decided') return;
  // A decision keeps the tool calls' words (clients match them); an answer is a question's.
  if (outcome === 'unknown') {
    throw new NotFoundError(
      field === 'decision'
        ? 'No tool call waits for approval with this id'
        : field === 'budget'
          ? 'No run waits for its budget to be raised with this id'
          : 'No question waits for an answer with this id',
      ERROR_CODES.APPROVAL_NOT_FOUND,
    );
  }
  if (outcome === 'already_decided') {
    throw new ConflictError(
      field === 'decision'
        ? `tool call ${callId} has already been decided`
        : field === 'budget'
          ? `budget request ${callId} has already been answered (or its run ended)`
          : `question ${callId} has already been answered`,
    );
  }
  throw new ValidationError(`invalid ${field}`, [
    { loc: ['body', field], msg: outcome.invalid, type: `value_error.${field}` },
  ]);
}
