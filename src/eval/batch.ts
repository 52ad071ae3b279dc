/**
 * Batch evaluation: a workflow run over dataset samples with a concurrency limit, each sample an
 * ordinary evaluated run (in history, with its events and `extra.evaluation`), and the
 * aggregate: mean score, grade distribution, pass rate, failures. Batches live in memory (the
 * most recent {@link MAX_BATCHES}); their runs are in the run files.
 */
import { randomBytes } from 'node:crypto';
import { errorMessage, ERROR_CODES, NotFoundError, ValidationError } from '../errors.js';
import type { EvalBatchRequest } from '../generated/api/eval-batch-request.js';
import type { EvalAggregate, EvalBatchResponse } from '../generated/api/eval-batch-response.js';
import type { AdapterName, RunService } from '../engine/types.js';
import type { CompiledWorkflow } from '../workflow/types.js';
import { checkSampleIndex, parseDatasetSource, type DatasetCatalogue } from './datasets.js';
import type { Evaluator } from './evaluator.js';
import { summarizeSample } from './samples.js';
import { GRADES } from './types.js';

/** Batches kept for `GET /api/eval/runs/{batch_id}`. */
export const MAX_BATCHES = 100;
/** Samples per batch. */
export const MAX_BATCH_SAMPLES = 1000;
export const DEFAULT_BATCH_CONCURRENCY = 2;
export const BATCH_ID = /^batch-[a-z0-9]{1,40}$/;

export type BatchItem = EvalBatchResponse['items'][number];

export interface BatchManagerOptions {
  runtime: Pick<RunService, 'start' | 'getWorkflow'>;
  evaluator: Evaluator;
  datasets: DatasetCatalogue;
  /** Called after each sample finishes (with it), and once when the batch ends (CLI progress). */
  onProgress?: (batch: EvalBatchResponse, item?: BatchItem) => void;
  now?: () => Date;
}

export interface BatchManager {
  /** Validates the request, starts the batch and returns its first snapshot. */
  start(request: EvalBatchRequest): Promise<EvalBatchResponse>;
  get(batchId: string): EvalBatchResponse | undefined;
  /** Resolves when the batch has finished. */
  finished(batchId: string): Promise<EvalBatchResponse>;
  /** Starts no further samples; resolves when every batch's loop has ended. */
  close(): Promise<void>;
}

/** Mean score, grade distribution, pass rate and failures of a batch's items. */
export function aggregate(items: readonly BatchItem[]): EvalAggregate {
  const scored = items.filter((item) => typeof item.overall_score === 'number');
  const distribution = Object.fromEntries(
    GRADES.map((g) => [g, 0]),
  ) as EvalAggregate['grade_distribution'];
  for (const item of scored) {
    if (item.grade !== null && item.grade in distribution) {
      distribution[item.grade as keyof typeof distribution] += 1;
    }
  }
  const total = scored.reduce((sum, item) => sum + (item.overall_score ?? 0), 0);
  return {
    scored: scored.length,
    mean_score: scored.length === 0 ? null : Math.round((total / scored.length) * 100) / 100,
    pass_rate:
      scored.length === 0
        ? null
        : Math.round(
            (scored.filter((item) => item.passed === true).length / scored.length) * 10000,
          ) / 10000,
    grade_distribution: distribution,
    failures: items.filter((item) => item.status === 'failed' || item.status === 'error').length,
  };
}

export function createBatchManager(options: BatchManagerOptions): BatchManager {
  const { runtime, evaluator, datasets } = options;
  const now = options.now ?? (() => new Date());
  const batches = new Map<string, EvalBatchResponse>();
  const loops = new Map<string, Promise<EvalBatchResponse>>();
  let closing = false;

  const remember = (batch: EvalBatchResponse): void => {
    batches.set(batch.batch_id, batch);
    for (const [id, old] of batches) {
      if (batches.size <= MAX_BATCHES) break;
      if (old.status === 'complete') batches.delete(id);
    }
  };

  async function workflowOf(name: string): Promise<CompiledWorkflow> {
    try {
      return await runtime.getWorkflow(name);
    } catch (error) {
      if (error instanceof NotFoundError) {
        throw new NotFoundError(`Workflow not found: ${name}`, ERROR_CODES.WORKFLOW_NOT_FOUND);
      }
      throw error;
    }
  }

  async function runItem(
    batch: EvalBatchResponse,
    item: BatchItem,
    workflow: CompiledWorkflow,
    adapter?: AdapterName,
  ) {
    item.status = 'running';
    try {
      const prepared = await evaluator.prepare(
        workflow,
        {
          dataset_source: batch.dataset_source,
          dataset_id: batch.dataset_id,
          sample_index: item.sample_index,
          rubric_id: batch.rubric_id,
        },
        {},
        ['body'],
      );
      const handle = await runtime.start({
        workflow: workflow.name,
        input: prepared.input,
        ...(adapter !== undefined ? { adapter } : {}),
        extra: { evaluation: prepared.settings, eval_batch: batch.batch_id },
      });
      item.run_id = handle.runId;
      const stored = await evaluator.complete(handle.done, workflow, prepared);
      const record = await handle.done;
      item.status = record.status === 'success' ? 'success' : 'failed';
      item.overall_score = stored.overall_score ?? null;
      item.grade = stored.grade ?? null;
      item.passed = stored.passed ?? null;
      item.error = stored.error ?? record.error;
    } catch (error) {
      item.status = 'error';
      item.error = errorMessage(error);
    }
  }

  async function loop(batch: EvalBatchResponse, workflow: CompiledWorkflow, adapter?: AdapterName) {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (!closing && next < batch.items.length) {
        const item = batch.items[next++];
        if (item === undefined) break;
        await runItem(batch, item, workflow, adapter);
        batch.completed += 1;
        batch.aggregate = aggregate(batch.items);
        options.onProgress?.(batch, item);
      }
    };
    await Promise.all(Array.from({ length: batch.concurrency }, worker));
    for (const item of batch.items) {
      if (item.status === 'pending') {
        item.status = 'error';
        item.error = 'not run: the service is shutting down';
      }
    }
    batch.status = 'complete';
    batch.finished_at = now().toISOString();
    batch.aggregate = aggregate(batch.items);
    options.onProgress?.(batch);
    return batch;
  }

  return {
    async start(request) {
      const workflow = await workflowOf(request.workflow);
      const source = parseDatasetSource(request.dataset_source, ['body', 'dataset_source']);
      const dataset = await datasets.get(source, request.dataset_id);
      let indices: number[];
      if (request.sample_indices !== undefined) {
        indices = request.sample_indices;
        for (const index of indices) checkSampleIndex(dataset, index, ['body', 'sample_indices']);
      } else {
        const limit = Math.min(request.limit ?? dataset.sampleCount, MAX_BATCH_SAMPLES);
        indices = Array.from({ length: Math.min(limit, dataset.sampleCount) }, (_, i) => i);
      }
      if (indices.length === 0) {
        const msg = `dataset ${source}/${dataset.id} has no samples`;
        throw new ValidationError(msg, [
          { loc: ['body', 'dataset_id'], msg, type: 'value_error.dataset' },
        ]);
      }
      // The rubric is checked once, before any run starts (422 for an unknown one).
      const { rubric } = await evaluator.prepare(workflow, { rubric_id: request.rubric_id }, {}, [
        'body',
      ]);
      const samples = await dataset.read(indices);
      const batchId = `batch-${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
      const batch: EvalBatchResponse = {
        batch_id: batchId,
        workflow: workflow.name,
        dataset_source: source,
        dataset_id: dataset.id,
        rubric_id: rubric.id,
        status: 'running',
        total: indices.length,
        completed: 0,
        concurrency: request.concurrency ?? DEFAULT_BATCH_CONCURRENCY,
        created_at: now().toISOString(),
        finished_at: null,
        items: indices.map((index, i) => ({
          sample_index: index,
          sample_id: summarizeSample(samples[i] ?? {}, index).sample_id,
          run_id: null,
          status: 'pending',
          overall_score: null,
          grade: null,
          passed: null,
          error: null,
        })),
        aggregate: aggregate([]),
      };
      remember(batch);
      const running = loop(batch, workflow, request.adapter);
      loops.set(batchId, running);
      void running.finally(() => loops.delete(batchId));
      return structuredClone(batch);
    },
    get(batchId) {
      const batch = batches.get(batchId);
      return batch === undefined ? undefined : structuredClone(batch);
    },
    async finished(batchId) {
      const running = loops.get(batchId);
      if (running !== undefined) await running;
      const batch = batches.get(batchId);
      if (batch === undefined) throw new NotFoundError('Batch not found', ERROR_CODES.NOT_FOUND);
      return structuredClone(batch);
    },
    async close() {
      closing = true;
      await Promise.allSettled([...loops.values()]);
    },
  };
}
