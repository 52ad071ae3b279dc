/**
 * Run endpoints: start (`POST /api/run`), cancel, list, summary and detail (spec endpoints
 * 13–16 and ours, `POST /api/runs/{run_id}/cancel` and `POST /api/runs/{run_id}/rerun`). History
 * answers come from the in-memory index, never from re-reading the run files.
 */
import type Router from '@koa/router';
import type { Context } from '@opentelemetry/api';
import type { Config } from '../../config/index.js';
import {
  AppError,
  ConflictError,
  ERROR_CODES,
  NotFoundError,
  ValidationError,
} from '../../errors.js';
import type { RunService, StartedRun } from '../../engine/types.js';
import { isWorkflowReference } from '../../engine/workflow-source.js';
import type { CancelRunResponse } from '../../generated/api/cancel-response.js';
import type { ResumeRunResponse } from '../../generated/api/resume-response.js';
import type { ExecutionProfile, WorkflowRunRequest } from '../../generated/api/run-request.js';
import type { WorkflowRunResponse } from '../../generated/api/run-response.js';
import type { HistoryIndex } from '../../store/history.js';
import type { Evaluator, PreparedEvaluation } from '../../eval/evaluator.js';
import type { CompiledWorkflow } from '../../workflow/types.js';
import { RUN_ID } from '../../store/history.js';
import { budgetFromWire } from '../../engine/budget/budget-limits.js';
import { param, requestBody } from '../context.js';
import { parseRerunRequest, parseRunRequest } from '../request-validation.js';
import { parseRunName } from '../run-names.js';
import { traceContextOf } from '../middleware/tracing.js';

/** Seconds clients are told to wait while the run history loads at start-up. */
const HISTORY_RETRY_AFTER_SECONDS = 2;

/** 503 for history answers that would be incomplete while the index loads. */
function historyLoading(): AppError {
  return new AppError(
    ERROR_CODES.HISTORY_LOADING,
    'the run history is loading after start-up; try again shortly',
    {
      status: 503,
      expose: true,
      headers: { 'Retry-After': String(HISTORY_RETRY_AFTER_SECONDS) },
    },
  );
}

export interface RunRouteDeps {
  runtime: Pick<
    RunService,
    'start' | 'cancel' | 'unwrittenRecord' | 'getWorkflow' | 'isActive' | 'rerun' | 'resume'
  >;
  history: HistoryIndex;
  config: Pick<Config, 'defaultAdapter'>;
  /** Scores runs that ask for evaluation; without it `evaluation.enabled: true` is a 422. */
  evaluator?: Evaluator;
  /** Throws (503) when a new run cannot be accepted now (a shared dependency is away). */
  admitRun?: () => void;
}

/** Largest `limit` accepted by `GET /api/runs`. */
export const MAX_LIST_LIMIT = 1000;

function profileOf(request: WorkflowRunRequest): Required<ExecutionProfile> | undefined {
  const profile = request.execution_profile;
  if (profile === undefined || profile === null) return undefined;
  return {
    runtime: profile.runtime ?? 'subprocess',
    max_attempts: profile.max_attempts ?? null,
    max_duration_minutes: profile.max_duration_minutes ?? null,
    container_image: profile.container_image ?? null,
  };
}

function queryString(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.at(-1) : value;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return 50;
  const limit = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) {
    const msg = `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`;
    throw new ValidationError(msg, [{ loc: ['query', 'limit'], msg, type: 'int_parsing' }]);
  }
  return limit;
}

const RUN_STATUSES = ['pending', 'running', 'success', 'failed'] as const;

/** `GET /api/runs?status=`: one of the run statuses (else 422 at `["query", "status"]`). */
function parseStatusFilter(raw: string | undefined): (typeof RUN_STATUSES)[number] | undefined {
  if (raw === undefined) return undefined;
  const status = RUN_STATUSES.find((s) => s === raw);
  if (status === undefined) {
    const msg = `status must be one of ${RUN_STATUSES.join(', ')}`;
    throw new ValidationError(msg, [{ loc: ['query', 'status'], msg, type: 'enum' }]);
  }
  return status;
}

/** `GET /api/runs?since=&until=`: an ISO 8601 date-time (or date), as epoch ms (else 422). */
function parseTimeFilter(name: 'since' | 'until', raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw)
    ? Date.parse(raw)
    : Number.NaN;
  if (Number.isNaN(ms)) {
    const msg = `${name} must be an ISO 8601 date-time (2026-11-28T04:00:00Z)`;
    throw new ValidationError(msg, [{ loc: ['query', name], msg, type: 'datetime_parsing' }]);
  }
  return ms;
}

function workflowNotFound(workflow: string): ValidationError {
  const msg = `workflow not found: ${workflow}`;
  return new ValidationError(
    msg,
    [{ loc: ['body', 'workflow'], msg, type: 'value_error.workflow_not_found' }],
    ERROR_CODES.WORKFLOW_NOT_FOUND,
  );
}

/** The compiled workflow of an evaluated run (an unknown workflow is the usual 422). */
async function loadForEvaluation(
  runtime: Pick<RunService, 'getWorkflow'>,
  workflow: string,
): Promise<CompiledWorkflow> {
  try {
    return await runtime.getWorkflow(workflow);
  } catch (error) {
    if (error instanceof NotFoundError && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
      throw workflowNotFound(workflow);
    }
    throw error;
  }
}

/** Where `POST /api/run` locates an input in its 422 list (`loc`: this, then the input name). */
export const RUN_INPUT_LOC = ['body', 'input_data'] as const;

/**
 * What `POST /api/run` does with a parsed request: admission, the workflow reference and run id
 * checks, evaluation, then the runtime's start (which validates the inputs: 422 naming them).
 * The MCP server's `tools/call` (src/http/mcp) starts runs through here too, so a run started
 * from an MCP client is checked, recorded and followed exactly as one started over HTTP.
 */
export async function startRequestedRun(
  deps: RunRouteDeps,
  request: WorkflowRunRequest,
  traceContext: Context | undefined,
): Promise<StartedRun> {
  const { runtime, history } = deps;
  deps.admitRun?.();
  // Names and YAML paths only: anything else (YAML text, odd characters) is an unknown workflow.
  if (!isWorkflowReference(request.workflow)) throw workflowNotFound(request.workflow);
  if (request.run_id !== undefined && request.run_id !== null) {
    // Ids name one run: reusing a finished run's id would hide it from id lookups.
    await history.whenLoaded();
    if (history.hasRunId(request.run_id)) {
      throw new ConflictError(
        `run '${request.run_id}' already exists; choose another run_id (or omit it)`,
      );
    }
  }
  const profile = profileOf(request);
  const extra: Record<string, unknown> = {};
  if (profile !== undefined) extra.execution_profile = profile;
  let input = request.input_data ?? {};
  let evaluated: { workflow: CompiledWorkflow; prepared: PreparedEvaluation } | undefined;
  if (request.evaluation?.enabled === true) {
    const { evaluator } = deps;
    if (evaluator === undefined) {
      throw new AppError(ERROR_CODES.VALIDATION, 'evaluation is not available in this service', {
        status: 422,
      });
    }
    const workflow = await loadForEvaluation(runtime, request.workflow);
    const prepared = await evaluator.prepare(workflow, request.evaluation, input, [
      'body',
      'evaluation',
    ]);
    input = prepared.input;
    extra.evaluation = prepared.settings;
    evaluated = { workflow, prepared };
  } else if (request.evaluation !== undefined && request.evaluation !== null) {
    extra.evaluation = request.evaluation;
  }
  // The runtime resolves the workflow (contained in the workflows dir, cached until the file
  // changes) and validates the inputs before it answers, so the workflow is looked up once
  // per request: 422 for an unknown workflow or bad inputs, 409 for an active run_id.
  let handle: StartedRun;
  try {
    handle = await runtime.start({
      workflow: request.workflow,
      input,
      inputLocPrefix: [...RUN_INPUT_LOC],
      adapter: request.adapter ?? deps.config.defaultAdapter,
      ...(request.run_id !== undefined ? { runId: request.run_id } : {}),
      ...(traceContext !== undefined ? { traceContext } : {}),
      ...(profile?.max_attempts != null ? { maxAttempts: profile.max_attempts } : {}),
      ...(request.budget == null ? {} : { budget: budgetFromWire(request.budget) }),
      ...(profile?.max_duration_minutes != null
        ? { timeoutMs: profile.max_duration_minutes * 60_000 }
        : {}),
      extra,
      // Clients follow runs through the event hub (WebSocket, SSE): a buffer of every event
      // for the handle, which nothing here reads, would hold them all until the run ends.
      events: false,
    });
  } catch (error) {
    if (error instanceof NotFoundError && error.code === ERROR_CODES.WORKFLOW_NOT_FOUND) {
      throw workflowNotFound(request.workflow);
    }
    throw error;
  }
  if (evaluated !== undefined) {
    void deps.evaluator?.complete(handle.done, evaluated.workflow, evaluated.prepared);
  }
  return handle;
}

export function registerRunRoutes(router: Router, deps: RunRouteDeps): void {
  const { runtime, history } = deps;

  router.post('/api/run', async (ctx) => {
    const handle = await startRequestedRun(
      deps,
      parseRunRequest(requestBody(ctx)),
      traceContextOf(ctx),
    );
    const body: WorkflowRunResponse = { run_id: handle.runId, status: 'pending' };
    ctx.body = body;
  });

  router.post('/api/runs/:run_id/cancel', async (ctx) => {
    const runId = param(ctx, 'run_id');
    if (!RUN_ID.test(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    if (!(await runtime.cancel(runId, 'cancelled'))) {
      if (!history.loaded && !history.hasRunId(runId)) throw historyLoading();
      if ((await history.getByRunId(runId)) !== undefined) {
        throw new ConflictError(`run ${runId} has already finished`);
      }
      throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    }
    const body: CancelRunResponse = { run_id: runId, status: 'cancelling' };
    ctx.body = body;
  });

  router.post('/api/runs/:run_id/rerun', async (ctx) => {
    const runId = param(ctx, 'run_id');
    const request = parseRerunRequest(requestBody(ctx));
    deps.admitRun?.();
    if (!RUN_ID.test(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    if (runtime.isActive(runId)) {
      throw new ConflictError(`run ${runId} is still running; rerun it once it has ended`);
    }
    const found = await history.getByRunId(runId);
    if (found === undefined) {
      if (!history.loaded) throw historyLoading();
      throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    }
    // Checked here for the 422's `loc`; the runtime checks the rest (running source, workflow).
    if (!found.record.steps.some((step) => step.step_name === request.from_step)) {
      const msg = `run ${runId} has no step ${JSON.stringify(request.from_step)}`;
      throw new ValidationError(msg, [
        { loc: ['body', 'from_step'], msg, type: 'value_error.unknown_step' },
      ]);
    }
    const traceContext = traceContextOf(ctx);
    const handle = await runtime.rerun(runId, {
      fromStep: request.from_step,
      ...(request.inputs === undefined ? {} : { inputs: request.inputs }),
      source: found.record,
      inputLocPrefix: ['body', 'inputs'],
      ...(traceContext !== undefined ? { traceContext } : {}),
      // As for POST /api/run: clients follow the run through the event hub.
      events: false,
    });
    const body: WorkflowRunResponse = { run_id: handle.runId, status: 'pending' };
    ctx.body = body;
  });

  router.post('/api/runs/:run_id/resume', async (ctx) => {
    const runId = param(ctx, 'run_id');
    if (!RUN_ID.test(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    const handle = await runtime.resume(runId);
    const body: ResumeRunResponse = { run_id: handle.runId, status: 'running' };
    ctx.body = body;
  });

  router.get('/api/runs', (ctx) => {
    if (!history.loaded) throw historyLoading();
    const limit = parseLimit(queryString(ctx.query.limit));
    ctx.body = history.list({
      limit,
      workflow: queryString(ctx.query.workflow),
      status: parseStatusFilter(queryString(ctx.query.status)),
      since: parseTimeFilter('since', queryString(ctx.query.since)),
      until: parseTimeFilter('until', queryString(ctx.query.until)),
    });
  });

  router.get('/api/runs/summary', (ctx) => {
    if (!history.loaded) throw historyLoading();
    ctx.body = history.summary({ workflow: queryString(ctx.query.workflow) });
  });

  router.get('/api/runs/:filename', async (ctx) => {
    const name = parseRunName(param(ctx, 'filename'));
    const found =
      name === undefined
        ? undefined
        : name.kind === 'id'
          ? await history.getByRunId(name.name)
          : await history.getByFilename(name.name);
    if (found === undefined) {
      // Not indexed yet is not "unknown": a file name is read directly, an id needs the index.
      if (name?.kind === 'id' && !history.loaded) throw historyLoading();
      throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    }
    // A run whose end record is still failing to be written shows its last record on disk
    // (never the unwritten end status) and says so under extra.persistence.
    const unwritten = runtime.unwrittenRecord(found.record.run_id);
    ctx.body =
      unwritten === undefined
        ? found.record
        : {
            ...found.record,
            extra: {
              ...found.record.extra,
              persistence: {
                persisted: false,
                detail: `the run's latest record is not yet written to the runs directory (${unwritten.error}); retrying`,
                attempts: unwritten.attempts,
                error: unwritten.error,
              },
            },
          };
  });
}
