import { useEffect, useMemo, useState } from 'preact/hooks';
import type { AdaptersResponse } from '../../../src/generated/api/adapters-response';
import type { DagResponse } from '../../../src/generated/api/dag-response';
import type { ListEvaluationDatasetsResponse } from '../../../src/generated/api/eval-datasets-response';
import type { PreviewDatasetInputsResponse } from '../../../src/generated/api/preview-dataset-inputs-response';
import type { WorkflowRunRequest } from '../../../src/generated/api/run-request';
import type { WorkflowRunResponse } from '../../../src/generated/api/run-response';
import { api, ApiError, seg, useApi } from '../api';
import { Dag } from '../components/dag';
import { ErrorNote } from '../components/error-note';
import {
  InputFields,
  initialValues,
  toField,
  toInputData,
  type FieldValue,
} from '../components/input-form';
import { href, navigate } from '../router';

/** One workflow: its DAG, its inputs as a form, and a run started from it. */
export function WorkflowPage({ name }: { name: string }) {
  const dag = useApi<DagResponse>(`/api/workflows/${seg(name)}/dag`);
  const nodes = useMemo(
    () =>
      (dag.data?.nodes ?? []).map((node) => ({
        id: node.id,
        detail: [
          node.kind ?? 'agent',
          node.kind === undefined || node.kind === 'agent' ? node.agent : null,
        ]
          .filter(Boolean)
          .join(': '),
      })),
    [dag.data],
  );
  return (
    <section aria-labelledby="workflow-title">
      <p class="crumbs">
        <a href={href('workflows')}>Workflows</a> /
      </p>
      <h1 id="workflow-title">{name}</h1>
      <ErrorNote error={dag.error} />
      {dag.data === undefined ? (
        dag.loading ? (
          <p aria-live="polite">Loading…</p>
        ) : null
      ) : (
        <>
          {dag.data.description ? <p>{dag.data.description}</p> : null}
          <div class="split">
            <div class="panel">
              <h2>Steps</h2>
              <Dag label={`DAG of ${name}`} nodes={nodes} edges={dag.data.edges} />
            </div>
            <RunForm dag={dag.data} />
          </div>
        </>
      )}
    </section>
  );
}

function RunForm({ dag }: { dag: DagResponse }) {
  const adapters = useApi<AdaptersResponse>('/api/adapters');
  const [values, setValues] = useState(() => initialValues(dag.inputs));
  const [adapter, setAdapter] = useState('');
  const [evaluation, setEvaluation] = useState<EvaluationChoice | undefined>(undefined);
  const [problems, setProblems] = useState<string[]>([]);
  const [starting, setStarting] = useState(false);
  useEffect(() => setValues(initialValues(dag.inputs)), [dag]);

  const onChange = (field: string, value: FieldValue): void =>
    setValues((previous) => ({ ...previous, [field]: value }));

  const start = async (event: Event): Promise<void> => {
    event.preventDefault();
    const parsed = toInputData(dag.inputs, values);
    if ('problems' in parsed) {
      setProblems(parsed.problems);
      return;
    }
    const body: WorkflowRunRequest = { workflow: dag.name, input_data: parsed.data };
    if (adapter === 'graph' || adapter === 'native') body.adapter = adapter;
    if (evaluation?.score === true) {
      body.evaluation = {
        enabled: true,
        dataset_source: evaluation.source,
        dataset_id: evaluation.datasetId,
        sample_index: evaluation.sampleIndex,
      };
    }
    setStarting(true);
    setProblems([]);
    try {
      const started = await api.post<WorkflowRunResponse>('/api/run', body);
      navigate(href('runs', started.run_id, 'live'));
    } catch (error) {
      setProblems([
        error instanceof ApiError ? `${error.status}: ${error.message}` : String(error),
      ]);
    } finally {
      setStarting(false);
    }
  };

  return (
    <form class="panel run-form" aria-labelledby="run-form-title" onSubmit={(e) => void start(e)}>
      <h2 id="run-form-title">Start a run</h2>
      <InputFields inputs={dag.inputs} values={values} onChange={onChange} />
      <div class="field">
        <label for="run-adapter">Adapter</label>
        <select
          id="run-adapter"
          value={adapter}
          onChange={(e) => setAdapter(e.currentTarget.value)}
        >
          <option value="">service default</option>
          {(adapters.data?.adapters ?? []).map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <DatasetSample
        workflow={dag.name}
        onUse={(inputs) =>
          setValues((previous) => {
            const next = { ...previous };
            for (const input of dag.inputs) {
              if (input.name in inputs) next[input.name] = toField(input, inputs[input.name]);
            }
            return next;
          })
        }
        onChoice={setEvaluation}
      />
      {problems.length > 0 ? (
        <ul class="error" role="alert">
          {problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      ) : null}
      <button type="submit" disabled={starting}>
        {starting ? 'Starting…' : 'Start run'}
      </button>
    </form>
  );
}

interface EvaluationChoice {
  source: 'repository' | 'local';
  datasetId: string;
  sampleIndex: number;
  /** Score the run against the dataset's rubric once it ends. */
  score: boolean;
}

interface DatasetSampleProps {
  workflow: string;
  onUse: (inputs: Record<string, unknown>) => void;
  onChoice: (choice: EvaluationChoice | undefined) => void;
}

/**
 * The evaluation: a dataset compatible with the workflow, one of its samples previewed as the
 * workflow's inputs (`GET /api/workflows/{name}/preview-dataset-inputs`), and whether to score.
 */
function DatasetSample({ workflow, onUse, onChoice }: DatasetSampleProps) {
  const datasets = useApi<ListEvaluationDatasetsResponse>(
    `/api/eval/datasets?workflow=${seg(workflow)}`,
  );
  const options = [...(datasets.data?.repository ?? []), ...(datasets.data?.local ?? [])];
  const [dataset, setDataset] = useState('');
  const [sample, setSample] = useState('0');
  const [score, setScore] = useState(false);
  const [preview, setPreview] = useState<PreviewDatasetInputsResponse | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const chosen = options.find((option) => `${option.source}/${option.id}` === dataset);
  const sampleIndex = Number.parseInt(sample, 10);

  useEffect(() => {
    onChoice(
      chosen === undefined || !Number.isInteger(sampleIndex)
        ? undefined
        : { source: chosen.source, datasetId: chosen.id, sampleIndex, score },
    );
  }, [chosen?.source, chosen?.id, sampleIndex, score]);

  if (options.length === 0) return null;
  const load = async (): Promise<void> => {
    if (chosen === undefined) return;
    setError(undefined);
    try {
      const query = new URLSearchParams({
        dataset_source: chosen.source,
        dataset_id: chosen.id,
        sample_index: String(Number.isInteger(sampleIndex) ? sampleIndex : 0),
      });
      setPreview(
        await api.get<PreviewDatasetInputsResponse>(
          `/api/workflows/${seg(workflow)}/preview-dataset-inputs?${query.toString()}`,
        ),
      );
    } catch (failure) {
      setPreview(undefined);
      setError(failure instanceof Error ? failure : new Error(String(failure)));
    }
  };
  return (
    <details class="evaluation">
      <summary>Evaluation and dataset samples</summary>
      <div class="field">
        <label for="eval-dataset">Dataset</label>
        <select
          id="eval-dataset"
          value={dataset}
          onChange={(e) => {
            setDataset(e.currentTarget.value);
            setPreview(undefined);
          }}
        >
          <option value="">none</option>
          {options.map((option) => (
            <option key={`${option.source}/${option.id}`} value={`${option.source}/${option.id}`}>
              {option.name} ({option.source}, {option.sample_count} samples)
            </option>
          ))}
        </select>
      </div>
      {chosen === undefined ? null : (
        <>
          <div class="field">
            <label for="eval-sample">Sample index</label>
            <input
              id="eval-sample"
              type="number"
              min={0}
              max={Math.max(0, chosen.sample_count - 1)}
              value={sample}
              onInput={(e) => {
                setSample(e.currentTarget.value);
                setPreview(undefined);
              }}
            />
          </div>
          <div class="row">
            <button type="button" class="secondary" onClick={() => void load()}>
              Preview sample
            </button>
            <label class="inline">
              <input
                type="checkbox"
                checked={score}
                onChange={(e) => setScore(e.currentTarget.checked)}
              />{' '}
              Score the run against this sample
            </label>
          </div>
          <ErrorNote error={error} />
          {preview === undefined ? null : (
            <div class="preview" aria-live="polite">
              <p>
                {preview.compatible
                  ? 'The sample fits the workflow.'
                  : 'The sample does not fit the workflow as it is.'}
                {preview.missing_inputs.length > 0
                  ? ` Missing: ${preview.missing_inputs.join(', ')}.`
                  : ''}
              </p>
              {preview.input_errors.map((problem) => (
                <p class="error" key={problem.loc.join('.')}>
                  {problem.loc.join('.')}: {problem.msg}
                </p>
              ))}
              <pre>{JSON.stringify(preview.adapted_inputs, null, 2)}</pre>
              <button type="button" class="secondary" onClick={() => onUse(preview.adapted_inputs)}>
                Use these inputs
              </button>
            </div>
          )}
        </>
      )}
    </details>
  );
}
