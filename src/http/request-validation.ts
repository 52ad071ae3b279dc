/**
 * Request bodies are checked against their JSON Schemas in `schemas/api/` (the same files the
 * OpenAPI document is generated from). ajv errors become the spec's 422 list, with `loc`
 * starting at `"body"` and pydantic-style `type` names that clients of the Python service know.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ValidationError, type ErrorDetail } from '../errors.js';
import type { ApprovalDecisionRequest } from '../generated/api/approval-decision-request.js';
import type { ChatRequest } from '../generated/api/chat-request.js';
import type { WorkflowEditorRequest } from '../generated/api/editor-request.js';
import type { WorkflowRunRequest } from '../generated/api/run-request.js';
import type { WorkflowRerunRequest } from '../generated/api/rerun-request.js';
import { validate as approvalDecisionRequest } from '../generated/validators/approval-decision-request.js';
import { validate as chatRequest } from '../generated/validators/chat-request.js';
import { validate as editorRequest } from '../generated/validators/editor-request.js';
import { validate as runRequest } from '../generated/validators/run-request.js';
import { validate as rerunRequest } from '../generated/validators/rerun-request.js';

// Precompiled from the schemas by `npm run gen` (scripts/validators.ts), defaults applied.
const validators = {
  run: runRequest as ValidateFunction<WorkflowRunRequest>,
  editor: editorRequest as ValidateFunction<WorkflowEditorRequest>,
  chat: chatRequest as ValidateFunction<ChatRequest>,
  approval: approvalDecisionRequest as ValidateFunction<ApprovalDecisionRequest>,
  rerun: rerunRequest as ValidateFunction<WorkflowRerunRequest>,
};

function pointerToLoc(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : part));
}

function describe(error: ErrorObject): ErrorDetail {
  const loc = ['body', ...pointerToLoc(error.instancePath)];
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return {
        loc: [...loc, String(params.missingProperty)],
        msg: 'Field required',
        type: 'missing',
      };
    case 'additionalProperties':
      return {
        loc: [...loc, String(params.additionalProperty)],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
      };
    case 'type':
      return {
        loc,
        msg: `Input should be of type ${String(params.type)}`,
        type: `${String(params.type)}_type`,
      };
    case 'enum':
      return {
        loc,
        msg: `Input should be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`,
        type: 'enum',
      };
    case 'const':
      return {
        loc,
        msg: `Input should be ${JSON.stringify(params.allowedValue)}`,
        type: 'literal_error',
      };
    case 'pattern':
      return {
        loc,
        msg:
          loc.at(-1) === 'run_id'
            ? 'run_id must be 1 to 128 characters of A-Z a-z 0-9 _ -'
            : loc.at(-1) === 'model'
              ? 'model must be a provider:model id or a model name, without spaces'
              : `String should match pattern ${String(params.pattern)}`,
        type: 'string_pattern_mismatch',
      };
    case 'minLength':
      return {
        loc,
        msg: `String should have at least ${String(params.limit)} characters`,
        type: 'string_too_short',
      };
    case 'maxLength':
      return {
        loc,
        msg: `String should have at most ${String(params.limit)} characters`,
        type: 'string_too_long',
      };
    case 'minItems':
      return {
        loc,
        msg: `List should have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`,
        type: 'too_short',
      };
    case 'minimum':
      return {
        loc,
        msg: `Input should be greater than or equal to ${String(params.limit)}`,
        type: 'greater_than_equal',
      };
    case 'maximum':
      return {
        loc,
        msg: `Input should be less than or equal to ${String(params.limit)}`,
        type: 'less_than_equal',
      };
    default:
      return { loc, msg: error.message ?? 'invalid value', type: 'value_error' };
  }
}

/** ajv's errors as the 422 list: deduplicated, without the noise of failed `oneOf` branches. */
export function toErrorDetails(errors: readonly ErrorObject[]): ErrorDetail[] {
  const out = new Map<string, ErrorDetail>();
  const oneOfPaths = new Set(
    errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath),
  );
  for (const error of errors) {
    // A nullable object ({oneOf: [X, null]}) reports both branches; keep the useful one.
    if (error.keyword === 'type' && error.params.type === 'null') continue;
    if (error.keyword === 'oneOf') continue;
    if (oneOfPaths.has(error.instancePath) && error.keyword === 'required') continue;
    const detail = describe(error);
    out.set(JSON.stringify(detail.loc) + detail.type, detail);
  }
  for (const path of oneOfPaths) {
    const loc = ['body', ...pointerToLoc(path)];
    const covered = [...out.values()].some((d) => loc.every((part, i) => d.loc[i] === part));
    if (!covered) {
      out.set(JSON.stringify(loc), {
        loc,
        msg: 'Input matches none or several of the accepted shapes',
        type: 'union_error',
      });
    }
  }
  return [...out.values()];
}

function check<T>(validate: ValidateFunction<T>, body: unknown): T {
  const value = body === undefined ? {} : body;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('invalid request body', [
      { loc: ['body'], msg: 'Input should be a JSON object', type: 'dict_type' },
    ]);
  }
  if (!validate(value))
    throw new ValidationError('invalid request body', toErrorDetails(validate.errors ?? []));
  return value;
}

/** Checks a `POST /api/run` body (applies schema defaults). */
export function parseRunRequest(body: unknown): WorkflowRunRequest {
  return check(validators.run, body);
}

/** Checks a `POST /api/runs/{run_id}/rerun` body. */
export function parseRerunRequest(body: unknown): WorkflowRerunRequest {
  return check(validators.rerun, body);
}

/** Checks a `POST /api/approvals/{call_id}` body. */
export function parseApprovalDecision(body: unknown): ApprovalDecisionRequest {
  const request = check(validators.approval, body);
  // A tool call is decided, a human step's question answered, a paused run's budget raised (or
  // denied): exactly one of the three.
  const given = [request.decision, request.answer, request.budget].filter((v) => v !== undefined);
  if (given.length !== 1) {
    throw new ValidationError('invalid request body', [
      {
        loc: ['body'],
        msg: "Give exactly one of decision (a tool call), answer (a human step's question) or budget (a run paused at its budget)",
        type: given.length === 0 ? 'missing' : 'value_error',
      },
    ]);
  }
  return request;
}

/** Checks a `PUT /api/workflows/{name}` or `POST /api/workflows/validate` body. */
export function parseEditorRequest(body: unknown): WorkflowEditorRequest {
  const keys = ['document', 'yaml_text', 'source'].filter(
    (key) => typeof body === 'object' && body !== null && key in body,
  );
  if (keys.length !== 1 && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    throw new ValidationError('invalid request body', [
      {
        loc: ['body'],
        msg: 'Give exactly one of document, yaml_text or source',
        type: keys.length === 0 ? 'missing' : 'value_error',
      },
    ]);
  }
  return check(validators.editor, body);
}

/** Checks a `POST /api/chat` body: the schema, then exactly one of `model` and `tier`. */
export function parseChatRequest(body: unknown): ChatRequest {
  const request = check(validators.chat, body);
  if ((request.model === undefined) === (request.tier === undefined)) {
    throw new ValidationError('invalid request body', [
      {
        loc: ['body'],
        msg: 'Give exactly one of model or tier',
        type: request.model === undefined ? 'missing' : 'value_error',
      },
    ]);
  }
  return request;
}
