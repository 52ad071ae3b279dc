/**
 * Evaluation dataset endpoints (spec 19–24): the dataset list, sample pages and details in the
 * path form and the deprecated query form (same shapes, plus a `Deprecation` header), and the
 * preview of a sample mapped onto a workflow's inputs. Read-only. Dataset ids are checked before
 * any path is built: a traversal attempt is a 404 like an unknown dataset; a bad source or an
 * index out of range is a 422.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ERROR_CODES, NotFoundError, ValidationError } from '../../errors.js';
import type { Dataset } from '../../eval/dataset-files.js';
import {
  isCompatible,
  parseDatasetSource,
  sampleAt,
  toOption,
  type DatasetCatalogue,
} from '../../eval/datasets.js';
import { adaptSample, summarizeSample } from '../../eval/samples.js';
import type { DatasetSampleDetailResponse } from '../../generated/api/dataset-sample-detail-response.js';
import type { DatasetSampleListResponse } from '../../generated/api/dataset-sample-list-response.js';
import type { ListEvaluationDatasetsResponse } from '../../generated/api/eval-datasets-response.js';
import type { PreviewDatasetInputsResponse } from '../../generated/api/preview-dataset-inputs-response.js';
import { isWorkflowName, runInputErrors, type WorkflowRegistry } from '../../workflow/index.js';
import { param } from '../context.js';
import { RUN_INPUT_LOC } from './runs.js';

export interface DatasetRouteDeps {
  datasets: DatasetCatalogue;
  registry: Pick<WorkflowRegistry, 'get'>;
}

/** Largest page of `sample-list` / `samples`. */
export const MAX_SAMPLE_PAGE = 500;

function query(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  return Array.isArray(value) ? value.at(-1) : value;
}

function intQuery(ctx: Context, name: string, fallback: number, max: number, min = 0): number {
  const raw = query(ctx, name);
  if (raw === undefined || raw === '') return fallback;
  const value = /^[0-9]{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    const msg = `${name} must be an integer from ${min} to ${max}`;
    throw new ValidationError(msg, [{ loc: ['query', name], msg, type: 'int_parsing' }]);
  }
  return value;
}

function required(value: string | undefined, loc: string[]): string {
  if (value === undefined || value === '') {
    const msg = `${loc.at(-1) ?? 'value'} is required`;
    throw new ValidationError(msg, [{ loc, msg, type: 'missing' }]);
  }
  return value;
}

function deprecated(ctx: Context, successor: string): void {
  ctx.set('Deprecation', 'true');
  ctx.set('Link', `<${successor}>; rel="successor-version"`);
}

/** Loads a workflow for a dataset question; an unknown (or unsafe) name is a 404. */
async function workflowOf(deps: DatasetRouteDeps, name: string) {
  if (!isWorkflowName(name)) {
    throw new NotFoundError(`Workflow not found: ${name}`, ERROR_CODES.WORKFLOW_NOT_FOUND);
  }
  return (await deps.registry.get(name)).compiled;
}

async function samplePage(
  dataset: Dataset,
  offset: number,
  limit: number,
): Promise<DatasetSampleListResponse> {
  const end = Math.min(offset + limit, dataset.sampleCount);
  const indices = Array.from({ length: Math.max(0, end - offset) }, (_, i) => offset + i);
  const samples = await dataset.read(indices);
  return {
    dataset_source: dataset.source,
    dataset_id: dataset.id,
    sample_count: dataset.sampleCount,
    offset,
    limit,
    samples: samples.map((sample, i) => summarizeSample(sample, offset + i)),
  };
}

async function sampleDetail(
  deps: DatasetRouteDeps,
  dataset: Dataset,
  index: number,
  workflow: string | undefined,
): Promise<DatasetSampleDetailResponse> {
  const sample = await sampleAt(dataset, index, ['query', 'sample_index']);
  const option = toOption(dataset);
  const detail: DatasetSampleDetailResponse = {
    dataset_source: dataset.source,
    dataset_id: dataset.id,
    ...summarizeSample(sample, index),
    sample,
    dataset_meta: {
      name: option.name,
      description: option.description,
      sample_count: option.sample_count,
      format: option.format,
      compatible_workflows: option.compatible_workflows,
    },
  };
  if (workflow !== undefined && workflow !== '') {
    const compiled = await workflowOf(deps, workflow);
    detail.workflow_preview = adaptSample(dataset, sample, compiled).adapted_inputs;
  }
  return detail;
}

export function registerDatasetRoutes(router: Router, deps: DatasetRouteDeps): void {
  const { datasets } = deps;
  const fromQuery = async (ctx: Context): Promise<Dataset> => {
    const source = parseDatasetSource(
      required(query(ctx, 'dataset_source'), ['query', 'dataset_source']),
      ['query', 'dataset_source'],
    );
    return datasets.get(source, required(query(ctx, 'dataset_id'), ['query', 'dataset_id']));
  };
  const fromPath = (ctx: Context & { params?: Record<string, string> }): Promise<Dataset> =>
    datasets.get(
      parseDatasetSource(param(ctx, 'source'), ['path', 'source']),
      param(ctx, 'dataset_id'),
    );
  const sampleIndex = (raw: string | undefined, loc: string[]): number => {
    const text = raw ?? '0';
    const value = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
    if (Number.isNaN(value)) {
      const msg = 'sample_index must be a non-negative integer';
      throw new ValidationError(msg, [{ loc, msg, type: 'int_parsing' }]);
    }
    return value;
  };

  router.get('/api/eval/datasets', async (ctx) => {
    const listed = await datasets.list();
    const sets = await datasets.evalSets();
    const name = query(ctx, 'workflow');
    if (name === undefined || name === '') {
      const body: ListEvaluationDatasetsResponse = { ...listed, eval_sets: sets };
      ctx.body = body;
      return;
    }
    const workflow = await workflowOf(deps, name);
    const keep = async (options: typeof listed.repository) => {
      const kept = [];
      for (const option of options) {
        const dataset = await datasets.get(option.source, option.id);
        if (await isCompatible(dataset, workflow)) kept.push(option);
      }
      return kept;
    };
    const repository = await keep(listed.repository);
    const local = await keep(listed.local);
    const ids = new Set([...repository, ...local].map((o) => o.id));
    const body: ListEvaluationDatasetsResponse = {
      repository,
      local,
      eval_sets: sets.filter((set) => set.datasets.some((id) => ids.has(id))),
    };
    ctx.body = body;
  });

  router.get('/api/eval/datasets/sample-list', async (ctx) => {
    const dataset = await fromQuery(ctx);
    deprecated(ctx, `/api/eval/datasets/${dataset.source}/${dataset.id}/samples`);
    ctx.body = await samplePage(
      dataset,
      intQuery(ctx, 'offset', 0, 1e9),
      intQuery(ctx, 'limit', 50, MAX_SAMPLE_PAGE, 1),
    );
  });

  router.get('/api/eval/datasets/sample-detail', async (ctx) => {
    const dataset = await fromQuery(ctx);
    const index = sampleIndex(query(ctx, 'sample_index'), ['query', 'sample_index']);
    deprecated(ctx, `/api/eval/datasets/${dataset.source}/${dataset.id}/samples/${index}`);
    ctx.body = await sampleDetail(deps, dataset, index, query(ctx, 'workflow'));
  });

  router.get('/api/eval/datasets/:source/:dataset_id/samples', async (ctx) => {
    ctx.body = await samplePage(
      await fromPath(ctx),
      intQuery(ctx, 'offset', 0, 1e9),
      intQuery(ctx, 'limit', 50, MAX_SAMPLE_PAGE, 1),
    );
  });

  router.get('/api/eval/datasets/:source/:dataset_id/samples/:sample_index', async (ctx) => {
    const dataset = await fromPath(ctx);
    const index = sampleIndex(param(ctx, 'sample_index'), ['path', 'sample_index']);
    ctx.body = await sampleDetail(deps, dataset, index, query(ctx, 'workflow'));
  });

  router.get('/api/workflows/:workflow_name/preview-dataset-inputs', async (ctx) => {
    const workflow = await workflowOf(deps, param(ctx, 'workflow_name'));
    const source = parseDatasetSource(
      required(query(ctx, 'dataset_source'), ['query', 'dataset_source']),
      ['query', 'dataset_source'],
    );
    const dataset = await datasets.get(
      source,
      required(query(ctx, 'dataset_id'), ['query', 'dataset_id']),
    );
    const index = sampleIndex(query(ctx, 'sample_index'), ['query', 'sample_index']);
    const sample = await sampleAt(dataset, index, ['query', 'sample_index']);
    const adapted = adaptSample(dataset, sample, workflow);
    // The checks POST /api/run applies to an evaluated run's inputs (the sample's, no others).
    const inputErrors = runInputErrors(workflow, adapted.adapted_inputs, [...RUN_INPUT_LOC]);
    const body: PreviewDatasetInputsResponse = {
      workflow: workflow.name,
      dataset_source: dataset.source,
      dataset_id: dataset.id,
      sample_index: index,
      ...adapted,
      compatible: adapted.compatible && inputErrors.length === 0,
      input_errors: inputErrors,
    };
    ctx.body = body;
  });
}
