/**
 * Datasets and evaluations: the evaluation datasets (`GET /api/eval/datasets`), a dataset's
 * samples (`GET /api/eval/datasets/{source}/{id}/samples`), and a batch evaluation of a workflow
 * over its first samples (`POST /api/eval/runs`) with its progress and aggregate
 * (`GET /api/eval/runs/{batch_id}`, polled until complete).
 */
import { useState } from 'preact/hooks';
import type { EvalBatchResponse } from '../../../src/generated/api/eval-batch-response';
import type { DatasetSampleListResponse } from '../../../src/generated/api/dataset-sample-list-response';
import type {
  DatasetOption,
  ListEvaluationDatasetsResponse,
} from '../../../src/generated/api/eval-datasets-response';
import { api, seg, useApi } from '../api';
import { ErrorNote } from '../components/error-note';
import { Facts, formatTime, StateBadge, usePolling } from '../components/run-facts';
import { href } from '../router';

export function DatasetsPage() {
  const { data, error, loading } = useApi<ListEvaluationDatasetsResponse>('/api/eval/datasets');
  const datasets = [...(data?.repository ?? []), ...(data?.local ?? [])];
  return (
    <section aria-labelledby="datasets-title">
      <h1 id="datasets-title">Datasets and evaluations</h1>
      <ErrorNote error={error} />
      {loading && data === undefined ? <p aria-live="polite">Loading…</p> : null}
      {data !== undefined && datasets.length === 0 ? <p>No dataset is installed.</p> : null}
      <ul class="card-list" aria-label="Datasets">
        {datasets.map((d) => (
          <li key={`${d.source}/${d.id}`}>
            <a class="card" href={href('datasets', d.source, d.id)}>
              <strong>{d.name}</strong>
              <br />
              <span class="hint">
                {d.source} · {d.sample_count} samples · {d.format}
              </span>
            </a>
          </li>
        ))}
      </ul>
      {data !== undefined && data.eval_sets.length > 0 ? (
        <>
          <h2>Eval sets</h2>
          <ul>
            {data.eval_sets.map((set) => (
              <li key={set.id}>
                <strong>{set.name}</strong>: {set.description} ({set.datasets.join(', ')}
                {set.rubric === null ? '' : `; rubric ${set.rubric}`})
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

export function DatasetPage({ source, datasetId }: { source: string; datasetId: string }) {
  const list = useApi<ListEvaluationDatasetsResponse>('/api/eval/datasets');
  const [offset, setOffset] = useState(0);
  const pageSize = 20;
  const samples = useApi<DatasetSampleListResponse>(
    `/api/eval/datasets/${seg(source)}/${seg(datasetId)}/samples?offset=${offset}&limit=${pageSize}`,
  );
  const dataset = [...(list.data?.repository ?? []), ...(list.data?.local ?? [])].find(
    (d) => d.source === source && d.id === datasetId,
  );
  const total = samples.data?.sample_count ?? 0;
  return (
    <section aria-labelledby="dataset-title">
      <p class="crumbs">
        <a href="#/datasets">Datasets</a> /
      </p>
      <h1 id="dataset-title">{dataset?.name ?? datasetId}</h1>
      <ErrorNote error={list.error ?? samples.error} />
      {dataset === undefined ? null : (
        <div class="panel">
          <p>{dataset.description}</p>
          <Facts
            rows={[
              ['Source', dataset.source],
              ['Samples', dataset.sample_count],
              ['Format', dataset.format],
              ['Compatible workflows', dataset.compatible_workflows.join(', ') || 'none'],
            ]}
          />
        </div>
      )}
      {dataset === undefined ? null : <BatchForm dataset={dataset} />}
      <h2>Samples</h2>
      {samples.data === undefined ? null : (
        <>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Samples">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Sample</th>
                  <th scope="col">Title</th>
                  <th scope="col">Summary</th>
                </tr>
              </thead>
              <tbody>
                {samples.data.samples.map((s) => (
                  <tr key={s.sample_index}>
                    <td>{s.sample_index}</td>
                    <td>{s.sample_id}</td>
                    <td>{s.title}</td>
                    <td>{s.summary}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="row" style="margin-top:0.5rem">
            <button
              type="button"
              class="secondary"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - pageSize))}
            >
              Previous samples
            </button>
            <span>
              {total === 0 ? 0 : offset + 1}–{Math.min(offset + pageSize, total)} of {total}
            </span>
            <button
              type="button"
              class="secondary"
              disabled={offset + pageSize >= total}
              onClick={() => setOffset(offset + pageSize)}
            >
              Next samples
            </button>
          </div>
        </>
      )}
    </section>
  );
}

function BatchForm({ dataset }: { dataset: DatasetOption }) {
  const [workflow, setWorkflow] = useState(dataset.compatible_workflows[0] ?? '');
  const [limit, setLimit] = useState(String(Math.min(3, dataset.sample_count)));
  const [concurrency, setConcurrency] = useState('2');
  const [batchId, setBatchId] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  if (dataset.compatible_workflows.length === 0) {
    return (
      <p class="hint">
        No workflow is compatible with this dataset, so it cannot be evaluated here.
      </p>
    );
  }
  return (
    <section class="panel" aria-labelledby="batch-title">
      <h2 id="batch-title">Evaluate a workflow on this dataset</h2>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setBusy(true);
          setFailure(undefined);
          api
            .post<EvalBatchResponse>('/api/eval/runs', {
              workflow,
              dataset_source: dataset.source,
              dataset_id: dataset.id,
              limit: Number(limit),
              concurrency: Number(concurrency),
            })
            .then(
              (batch) => setBatchId(batch.batch_id),
              (error: unknown) =>
                setFailure(error instanceof Error ? error : new Error(String(error))),
            )
            .finally(() => setBusy(false));
        }}
      >
        <div>
          <label for="batch-workflow">Workflow</label>
          <select
            id="batch-workflow"
            value={workflow}
            onChange={(e) => setWorkflow(e.currentTarget.value)}
          >
            {dataset.compatible_workflows.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="batch-limit">Samples (the first)</label>
          <input
            id="batch-limit"
            type="number"
            min="1"
            max={dataset.sample_count}
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="batch-concurrency">At once</label>
          <input
            id="batch-concurrency"
            type="number"
            min="1"
            value={concurrency}
            onInput={(e) => setConcurrency(e.currentTarget.value)}
          />
        </div>
        <div>
          <button type="submit" disabled={busy}>
            Start evaluation
          </button>
        </div>
      </form>
      <ErrorNote error={failure} />
      {batchId === undefined ? null : <BatchProgress key={batchId} batchId={batchId} />}
    </section>
  );
}

function BatchProgress({ batchId }: { batchId: string }) {
  const { data, error, reload } = useApi<EvalBatchResponse>(`/api/eval/runs/${seg(batchId)}`);
  usePolling(reload, 1000, data?.status !== 'complete');
  if (data === undefined) return <ErrorNote error={error} />;
  const { aggregate } = data;
  return (
    <div aria-labelledby="batch-progress-title">
      <h3 id="batch-progress-title">
        Batch {data.batch_id} <StateBadge state={data.status} />
      </h3>
      <label for="batch-progress">
        {data.completed} of {data.total} samples done
      </label>
      <progress id="batch-progress" class="progress" max={data.total} value={data.completed} />
      <Facts
        rows={[
          ['Started', formatTime(data.created_at)],
          ['Finished', formatTime(data.finished_at)],
          ['Rubric', data.rubric_id],
          ['Scored', aggregate.scored],
          ['Mean score', aggregate.mean_score ?? undefined],
          [
            'Pass rate',
            aggregate.pass_rate === null ? undefined : `${Math.round(aggregate.pass_rate * 100)} %`,
          ],
          [
            'Grades',
            Object.entries(aggregate.grade_distribution)
              .map(([g, n]) => `${g} ${n}`)
              .join(' · '),
          ],
          ['Failures', aggregate.failures],
        ]}
      />
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Batch items">
        <table class="data">
          <thead>
            <tr>
              <th scope="col">Sample</th>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Score</th>
              <th scope="col">Passed</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((item) => (
              <tr key={item.sample_index}>
                <td>{item.sample_id}</td>
                <td>
                  {item.run_id === null ? (
                    ''
                  ) : (
                    <a href={href('runs', item.run_id)}>{item.run_id}</a>
                  )}
                </td>
                <td>
                  <StateBadge state={item.status} />
                  {item.error === null ? '' : ` ${item.error}`}
                </td>
                <td>
                  {item.overall_score === null ? '' : `${item.overall_score} (${item.grade ?? ''})`}
                </td>
                <td>{item.passed === null ? '' : item.passed ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
