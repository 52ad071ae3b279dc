/**
 * Batch evaluation: `POST /api/eval/runs` starts a workflow over dataset samples (each sample a
 * normal evaluated run in history) and answers the batch at once; `GET /api/eval/runs/{batch_id}`
 * gives its progress and aggregate.
 */
import type Router from '@koa/router';
import type { ValidateFunction } from 'ajv';
import { ERROR_CODES, NotFoundError, ValidationError } from '../../errors.js';
import { BATCH_ID, type BatchManager } from '../../eval/batch.js';
import type { EvalBatchRequest } from '../../generated/api/eval-batch-request.js';
import { validate as validateBatchRequest } from '../../generated/validators/eval-batch-request.js';
import { param, requestBody } from '../context.js';
import { toErrorDetails } from '../request-validation.js';

// Precompiled from its schema by `npm run gen` (scripts/validators.ts), defaults applied.
const validate = validateBatchRequest as ValidateFunction<EvalBatchRequest>;

function parseBatchRequest(body: unknown): EvalBatchRequest {
  const value = body ?? {};
  if (typeof value !== 'object' || Array.isArray(value) || !validate(value)) {
    const details =
      typeof value === 'object' && !Array.isArray(value)
        ? toErrorDetails(validate.errors ?? [])
        : [{ loc: ['body'], msg: 'Input should be a JSON object', type: 'dict_type' }];
    throw new ValidationError(details[0]?.msg ?? 'invalid request body', details);
  }
  if (value.sample_indices !== undefined && value.limit !== undefined) {
    const msg = 'give sample_indices or limit, not both';
    throw new ValidationError(msg, [{ loc: ['body', 'limit'], msg, type: 'value_error' }]);
  }
  return value;
}

export function registerEvalRunRoutes(router: Router, deps: { batches: BatchManager }): void {
  router.post('/api/eval/runs', async (ctx) => {
    ctx.body = await deps.batches.start(parseBatchRequest(requestBody(ctx)));
  });

  router.get('/api/eval/runs/:batch_id', (ctx) => {
    const id = param(ctx, 'batch_id');
    const batch = BATCH_ID.test(id) ? deps.batches.get(id) : undefined;
    if (batch === undefined) throw new NotFoundError('Batch not found', ERROR_CODES.NOT_FOUND);
    ctx.body = batch;
  });
}
