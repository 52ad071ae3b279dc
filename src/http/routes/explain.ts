/**
 * `GET /api/runs/{run_id}/explain`: why a run is not moving. A run active in this process is
 * explained from its engine (step states, dependencies, a false `when:`, retry backoffs, the
 * concurrency limit), its pending approvals and the circuit breakers of its steps' tiers; a run
 * queued to the workers (Redis) by its place in the queue, or the worker that took it and its
 * tool calls waiting for approval (the deployment's shared approvals); any other
 * run of the history from its run file. Unknown runs are 404.
 */
import type Router from '@koa/router';
import { AppError, ERROR_CODES, NotFoundError } from '../../errors.js';
import {
  approvalWait,
  explainActiveRun,
  type BreakerLookup,
  type RunExplanationResponse,
  type StepExplanation,
} from '../../engine/run-explain.js';
import { explainRecord } from '../../engine/record-explain.js';
import type { RunPlace, RunService } from '../../engine/types.js';
import type { HistoryIndex } from '../../store/history.js';
import { RUN_ID } from '../../store/history.js';
import { param } from '../context.js';

/** Seconds clients are told to wait while the run history loads at start-up. */
const HISTORY_RETRY_AFTER_SECONDS = 2;

type Explaining = Pick<RunService, 'explain' | 'approvals'>;

export interface ExplainRouteDeps {
  /** The service's runs: its runtime, or the run queue's facade (`locate`). */
  runtime: Pick<RunService, 'explain' | 'locate' | 'approvals' | 'getWorkflow'>;
  /** The runtime executing runs in this process when it is not `runtime` (role `all`). */
  local?: Explaining;
  history: HistoryIndex;
  /** The circuit breakers of a step's tier. @default none known */
  breakers?: BreakerLookup;
  /** @default Date.now */
  now?: () => number;
}

async function explainActive(
  source: Explaining,
  runId: string,
  deps: ExplainRouteDeps,
): Promise<RunExplanationResponse | undefined> {
  const active = source.explain?.(runId);
  if (active === undefined) return undefined;
  const approvals = (await source.approvals.pending()).filter((call) => call.runId === runId);
  return explainActiveRun(active, {
    now: (deps.now ?? Date.now)(),
    approvals,
    approvalProvider: source.approvals.provider,
    ...(deps.breakers === undefined ? {} : { breakers: deps.breakers }),
  });
}

/**
 * A run queued to the workers: its place in the queue, or the worker that took it and the tool
 * calls of it that wait for a person (the deployment's approvals, shared through Redis).
 */
async function explainPlace(
  runId: string,
  place: RunPlace,
  deps: ExplainRouteDeps,
): Promise<RunExplanationResponse> {
  const workflow = place.workflow;
  const named = workflow === null ? `Run ${runId}` : `Run ${runId} (${workflow})`;
  if (place.state === 'queued') {
    const ahead = place.position - 1;
    return {
      run_id: runId,
      workflow,
      status: 'queued',
      reason: 'queued',
      source: 'queue',
      message: `${named} waits in the worker queue: position ${place.position} of ${place.waiting} (${ahead === 0 ? 'the next run a worker takes' : `${ahead} ${ahead === 1 ? 'run' : 'runs'} ahead`}). No worker has taken it yet: are workers running, and are they all busy?`,
      queue: { position: place.position, waiting: place.waiting },
      steps: [],
    };
  }
  const approvals = deps.runtime.approvals;
  const now = (deps.now ?? Date.now)();
  const steps: StepExplanation[] = (await approvals.pending())
    .filter((call) => call.runId === runId)
    .map((call) => ({
      step: call.step,
      status: call.kind === 'input' ? 'awaiting_input' : 'awaiting_approval',
      waits: [approvalWait(call, approvals.provider, now)],
    }));
  // Its running map steps' item counts, from the latest item frames of its event stream.
  const counted: string[] = [];
  for (const [step, progress] of place.items ?? []) {
    const { total, done, failed, running } = progress;
    const pending = Math.max(0, total - done - failed - running);
    const words = `${done} of ${total} done, ${failed} failed, ${running} running, ${pending} pending`;
    counted.push(`${step}: items ${words}`);
    if (steps.some((s) => s.step === step)) continue;
    steps.push({
      step,
      status: 'running',
      waits: [{ reason: 'running', message: `running on the worker; items: ${words}` }],
      items: { total, done, failed, running, pending },
    });
  }
  const waiting = steps
    .filter((s) => s.status !== 'running')
    .map(
      (s) =>
        `${s.step} ${s.status === 'awaiting_input' ? 'waits for an answer' : 'waits for an approval'}`,
    );
  return {
    run_id: runId,
    workflow,
    status: 'running',
    reason: 'on_worker',
    source: 'queue',
    message: `${named} runs on worker ${place.worker ?? '(taking it now)'}; its steps are known there (its events stream through GET /api/runs/${runId}/stream)${[...waiting, ...counted].map((part) => `; ${part}`).join('')}.`,
    ...(place.worker === undefined ? {} : { worker: place.worker }),
    steps,
  };
}

export function registerExplainRoute(router: Router, deps: ExplainRouteDeps): void {
  const { runtime, history } = deps;
  router.get('/api/runs/:run_id/explain', async (ctx) => {
    const runId = param(ctx, 'run_id');
    if (!RUN_ID.test(runId)) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    for (const source of deps.local === undefined ? [runtime] : [deps.local, runtime]) {
      const answer = await explainActive(source, runId, deps);
      if (answer !== undefined) {
        ctx.body = answer;
        return;
      }
    }
    const place = await runtime.locate?.(runId);
    if (place !== undefined) {
      ctx.body = await explainPlace(runId, place, deps);
      return;
    }
    const found = await history.getByRunId(runId);
    if (found === undefined) {
      if (!history.loaded) {
        throw new AppError(
          ERROR_CODES.HISTORY_LOADING,
          'the run history is loading after start-up; try again shortly',
          {
            status: 503,
            expose: true,
            headers: { 'Retry-After': String(HISTORY_RETRY_AFTER_SECONDS) },
          },
        );
      }
      throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    }
    // The workflow as it is now gives the when: texts; an edited-away or deleted one gives none.
    const workflow = await runtime.getWorkflow(found.record.workflow_name).catch(() => undefined);
    ctx.body = explainRecord(found.record, workflow);
  });
}
