/**
 * `GET /api/runs/{filename}/evaluation` (spec 17): a run's evaluation from its run file, by file
 * name or run id. `evaluation` is null for a run that was not evaluated, and while its scoring
 * is pending or when it failed (`evaluation_status` and `error` say which). `status` is the run's.
 */
import type Router from '@koa/router';
import { ERROR_CODES, NotFoundError } from '../../errors.js';
import { storedEvaluationNow } from '../../eval/stored-evaluation.js';
import type { EvaluationResult } from '../../generated/api/run-evaluation-response.js';
import type { RunEvaluationDetailResponse } from '../../generated/api/run-evaluation-response.js';
import type { HistoryIndex } from '../../store/history.js';
import { param } from '../context.js';
import { parseRunName } from '../run-names.js';

const STATUSES = ['pending', 'complete', 'failed'] as const;

export function registerRunEvaluationRoute(router: Router, deps: { history: HistoryIndex }): void {
  router.get('/api/runs/:filename/evaluation', async (ctx) => {
    const name = parseRunName(param(ctx, 'filename'));
    const found =
      name === undefined
        ? undefined
        : name.kind === 'id'
          ? await deps.history.getByRunId(name.name)
          : await deps.history.getByFilename(name.name);
    if (found === undefined) throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    const { record, filename } = found;
    const raw = record.extra.evaluation as Record<string, unknown> | null | undefined;
    const requested = typeof raw === 'object' && raw !== null && raw.enabled === true;
    const body: RunEvaluationDetailResponse = {
      run_id: record.run_id,
      filename,
      workflow_name: record.workflow_name,
      status: record.status,
      evaluation_requested: requested,
      evaluation_status: 'not_requested',
      dataset: null,
      evaluation: null,
    };
    if (!requested) {
      ctx.body = body;
      return;
    }
    const status = STATUSES.find((s) => s === raw.status) ?? 'pending';
    body.evaluation_status = status;
    if (typeof raw.dataset_id === 'string' && typeof raw.dataset_source === 'string') {
      body.dataset = {
        source: raw.dataset_source,
        id: raw.dataset_id,
        sample_index: typeof raw.sample_index === 'number' ? raw.sample_index : 0,
        sample_id: typeof raw.sample_id === 'string' ? raw.sample_id : null,
      };
    }
    // Run files written by earlier versions lack fields clients read: filled in here.
    if (status === 'complete') {
      body.evaluation = storedEvaluationNow(raw) as unknown as EvaluationResult;
    }
    if (status === 'failed') body.error = typeof raw.error === 'string' ? raw.error : null;
    ctx.body = body;
  });
}
