/**
 * An MCP `tools/call` of a workflow (docs/mcp.md): the arguments are sanitized and the run is
 * started exactly as `POST /api/run` does it (routes/runs.ts `startRequestedRun`: admission,
 * input validation, run file, history, WebSocket/SSE events); the call then follows the run's
 * events through the event hub (progress), cancels it when the client cancels the call, and
 * answers with its declared outputs, or with `isError` and the run's error.
 */
import type { Context as TraceContext } from '@opentelemetry/api';
import { AppError, errorMessage, NotFoundError } from '../../errors.js';
import type { RunService } from '../../engine/types.js';
import type { EventHub, HubSubscription } from '../../events/hub.js';
import type { WorkflowEvent } from '../../generated/events.js';
import type { RunRecord } from '../../generated/run-record.js';
import type { Logger } from '../../log.js';
import { parseRunRequest } from '../request-validation.js';
import type { SanitizeBody } from '../middleware/sanitize.js';
import { startRequestedRun, type RunRouteDeps } from '../routes/runs.js';

/** `_meta` key of a call's result naming the run it started (`GET /api/runs/{run_id}`). */
export const RUN_ID_META_KEY = 'agentic-runtime/run_id';

/** What a call answers (the MCP `CallToolResult` shape). */
export interface WorkflowCallResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** One `notifications/progress`: steps done of the workflow's steps. */
export interface WorkflowProgress {
  progress: number;
  total: number;
  message: string;
}

export interface WorkflowCallDeps {
  runs: RunRouteDeps;
  runtime: Pick<RunService, 'cancel' | 'getWorkflow'>;
  hub: Pick<EventHub, 'open'>;
  sanitizeBody: SanitizeBody;
  logger: Logger;
}

export interface WorkflowCall {
  /** The tool name, which is the workflow name (workflow-tool.ts). */
  name: string;
  arguments: Record<string, unknown> | undefined;
  /** Aborted when the client cancels the call (or goes away). */
  signal: AbortSignal;
  /** Sends one progress notification; absent when the client asked for none. */
  progress?: (progress: WorkflowProgress) => Promise<void>;
  traceContext?: TraceContext;
}

/** A name the registry lists (workflow-files.ts): anything else is no tool of ours. */
const TOOL_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/** `unknown_tool`: the caller answers the protocol's invalid-params error. */
export type WorkflowCallOutcome =
  { kind: 'unknown_tool' } | { kind: 'result'; result: WorkflowCallResult };

export function toolError(text: string, runId?: string): WorkflowCallResult {
  return {
    content: [{ type: 'text', text }],
    isError: true,
    ...(runId === undefined ? {} : { _meta: { [RUN_ID_META_KEY]: runId } }),
  };
}

/** A refusal as its `{detail}` would say it, with each 422 problem and where it is. */
export function describeRefusal(error: AppError): string {
  const details = error.details ?? [];
  const problems = details.map((detail) => {
    const where = detail.loc.filter((part) => part !== 'body' && part !== 'input_data');
    return where.length === 0 ? detail.msg : `${where.join('.')}: ${detail.msg}`;
  });
  const [only] = details;
  // One problem the message already says: said once, with where it is.
  if (problems.length === 1 && only !== undefined && error.message.includes(only.msg)) {
    return problems[0] ?? error.message;
  }
  if (problems.length === 0) return error.message;
  return `${error.message}\n${problems.map((p) => `- ${p}`).join('\n')}`;
}

/**
 * An error the service would answer as its `{detail}` (a 4xx, or an exposed 503 such as
 * `runs_budget_spent`): the call's answer is a tool error saying it. Anything else is thrown.
 */
function isRefusal(error: unknown): error is AppError {
  return error instanceof AppError && error.expose;
}

export async function callWorkflow(
  deps: WorkflowCallDeps,
  call: WorkflowCall,
): Promise<WorkflowCallOutcome> {
  if (!TOOL_NAME.test(call.name)) return { kind: 'unknown_tool' };
  let steps: number;
  try {
    steps = (await deps.runtime.getWorkflow(call.name)).steps.length;
  } catch (error) {
    if (error instanceof NotFoundError) return { kind: 'unknown_tool' };
    // An invalid workflow file is listed but cannot run: its 422 is the call's answer.
    if (isRefusal(error)) return { kind: 'result', result: toolError(describeRefusal(error)) };
    throw error;
  }
  let started;
  try {
    const sanitized = deps.sanitizeBody(call.arguments ?? {}, undefined);
    const request = parseRunRequest({ workflow: call.name, input_data: sanitized.body });
    started = await startRequestedRun(deps.runs, request, call.traceContext);
  } catch (error) {
    if (isRefusal(error)) return { kind: 'result', result: toolError(describeRefusal(error)) };
    throw error;
  }
  const { runId } = started;
  const onAbort = (): void => {
    Promise.resolve(deps.runtime.cancel(runId, 'cancelled')).catch((error: unknown) => {
      deps.logger.warn(
        { err: error, run_id: runId },
        'MCP: the cancelled call could not cancel its run',
      );
    });
  };
  call.signal.addEventListener('abort', onAbort, { once: true });
  if (call.signal.aborted) onAbort();
  const subscription =
    call.progress === undefined
      ? undefined
      : await followProgress(deps, runId, steps, call.progress);
  let record: RunRecord;
  try {
    record = await started.done;
  } finally {
    call.signal.removeEventListener('abort', onAbort);
    subscription?.unsubscribe();
  }
  return { kind: 'result', result: resultOf(record) };
}

function resultOf(record: RunRecord): WorkflowCallResult {
  const meta = { [RUN_ID_META_KEY]: record.run_id };
  if (record.status !== 'success') {
    return toolError(
      `run ${record.run_id} failed: ${record.error ?? 'unknown error'}`,
      record.run_id,
    );
  }
  const outputs = record.final_output ?? {};
  return {
    content: [{ type: 'text', text: JSON.stringify(outputs) }],
    structuredContent: outputs,
    _meta: meta,
  };
}

/**
 * Progress from the run's events: the first at 0 when the run starts, then one each time a step
 * of the workflow finishes (`step_end`/`step_complete` with a final status), `progress` = steps done and
 * `total` = the workflow's steps. A `step_start` moves nothing: the protocol wants `progress`
 * to increase with every notification. A map's item frames and a sub-workflow's forwarded
 * events are not steps of this workflow.
 */
async function followProgress(
  deps: WorkflowCallDeps,
  runId: string,
  total: number,
  send: (progress: WorkflowProgress) => Promise<void>,
): Promise<HubSubscription | undefined> {
  const done = new Set<string>();
  let announced = false;
  // One at a time, in order: a notification is written once the one before it is out.
  let sending = Promise.resolve();
  const notify = (progress: WorkflowProgress): void => {
    sending = sending
      .then(() => send(progress))
      .catch((error: unknown) => {
        deps.logger.debug({ err: errorMessage(error), run_id: runId }, 'MCP: progress not sent');
      });
  };
  const listener = (event: WorkflowEvent): void => {
    if (!announced && (event.type === 'workflow_start' || event.type === 'step_start')) {
      announced = true;
      notify({ progress: 0, total, message: `run ${runId} started` });
    }
    // A step's end is `step_end` or `step_complete` (the events dialect, docs/events.md).
    if (event.type !== 'step_end' && event.type !== 'step_complete') return;
    if (event.parent_step !== undefined || done.has(event.step)) return;
    if (event.type === 'step_complete' && event.item !== undefined) return;
    if (event.status !== 'success' && event.status !== 'failed' && event.status !== 'skipped') {
      return;
    }
    done.add(event.step);
    notify({ progress: done.size, total, message: `${event.step} ${event.status}` });
  };
  // Live events can arrive before `open` resolves with the replay: held until it is read.
  let held: WorkflowEvent[] | undefined = [];
  let lastSeq = -1;
  const inOrder = (event: WorkflowEvent): void => {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    listener(event);
  };
  try {
    const subscription = await deps.hub.open(
      runId,
      (event) => (held === undefined ? inOrder(event) : held.push(event)),
      { waitForStart: () => true },
    );
    for (const event of [...(subscription?.replay ?? []), ...held]) inOrder(event);
    held = undefined;
    return subscription;
  } catch (error) {
    // Progress is a courtesy: the call still answers when the run's events cannot be followed.
    deps.logger.warn({ err: error, run_id: runId }, 'MCP: the run events cannot be followed');
    return undefined;
  }
}
