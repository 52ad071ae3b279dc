/**
 * A run's detail (`GET /api/runs/{id}`, polled while it runs): its facts, parent and child runs,
 * inputs and outputs, each step (status, agent, model, tokens, cost when recorded, inputs,
 * outputs, error); why it is not moving (`GET /api/runs/{id}/explain`); its evaluation with
 * criteria, floors and gates (`GET /api/runs/{id}/evaluation`); rerun from a step
 * (`POST /api/runs/{id}/rerun`, then the new run's page) and resume when it was interrupted
 * (`POST /api/runs/{id}/resume`).
 */
import { useState } from 'preact/hooks';
import type { RunEvaluationDetailResponse } from '../../../src/generated/api/run-evaluation-response';
import type { RunExplanationResponse } from '../../../src/generated/api/run-explanation-response';
import type { WorkflowRunResponse } from '../../../src/generated/api/run-response';
import type { RunRecord, StepRecord } from '../../../src/generated/run-record';
import { api, seg, useApi } from '../api';
import { ErrorNote } from '../components/error-note';
import {
  Facts,
  formatMs,
  formatTime,
  JsonBlock,
  StateBadge,
  usePolling,
} from '../components/run-facts';
import { href, navigate } from '../router';

/** Wait reasons a person answers in the Inbox (`budget`: a run paused at its budget). */
const WAITS_FOR_A_PERSON: ReadonlySet<string> = new Set(['approval', 'input', 'budget']);

const moving = (status: string | undefined): boolean =>
  status === 'running' || status === 'pending';

export function RunDetailPage({ runId }: { runId: string }) {
  const run = useApi<RunRecord>(`/api/runs/${seg(runId)}`);
  usePolling(run.reload, 1500, moving(run.data?.status));
  const record = run.data;
  return (
    <section aria-labelledby="run-title">
      <p class="crumbs">
        <a href="#/runs">Runs</a> /
      </p>
      <h1 id="run-title">Run {runId}</h1>
      <ErrorNote error={run.error} />
      {run.loading && record === undefined ? <p aria-live="polite">Loading…</p> : null}
      {record === undefined ? null : <RunBody record={record} reload={run.reload} />}
    </section>
  );
}

function RunBody({ record, reload }: { record: RunRecord; reload: () => void }) {
  const extra = record.extra;
  const tokens = record.steps.reduce((sum, s) => sum + (s.tokens_used?.total ?? 0), 0);
  const cost = costOf(record.steps);
  return (
    <>
      <div class="panel">
        <Facts
          rows={[
            ['Status', <StateBadge state={record.status} />],
            ['Workflow', record.workflow_name],
            ['Adapter', record.adapter],
            ['Started', formatTime(record.start_time)],
            ['Ended', formatTime(record.end_time)],
            ['Duration', formatMs(record.total_duration_ms)],
            ['Steps', `${record.step_count} (${record.failed_step_count} failed)`],
            ['Tokens', tokens],
            ['Cost (USD)', cost],
            ['Error', record.error],
            [
              'Parent run',
              extra.parent_run_id === undefined ? undefined : (
                <a href={href('runs', extra.parent_run_id)}>
                  {extra.parent_run_id}
                  {extra.parent_step === undefined ? '' : ` (step ${extra.parent_step})`}
                </a>
              ),
            ],
            [
              'Rerun of',
              extra.forked_from === undefined ? undefined : (
                <a href={href('runs', extra.forked_from.run_id)}>
                  {extra.forked_from.run_id} from {extra.forked_from.step}
                </a>
              ),
            ],
          ]}
        />
        {moving(record.status) ? (
          <p>
            <a href={`${href('runs', record.run_id)}/live`}>Watch it live</a>
          </p>
        ) : null}
        {extra.child_run_ids !== undefined && extra.child_run_ids.length > 0 ? (
          <>
            <h2>Child runs</h2>
            <ul aria-label="Child runs">
              {extra.child_run_ids.map((id) => (
                <li key={id}>
                  <a href={href('runs', id)}>{id}</a>
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
      <Explain runId={record.run_id} status={record.status} />
      <RunActions record={record} reload={reload} />
      <h2>Inputs</h2>
      <JsonBlock value={record.inputs} label="Run inputs" />
      <h2>Steps</h2>
      <ol class="stack" style="padding-left:1.2rem">
        {record.steps.map((step) => (
          <li key={step.step_name}>
            <StepPanel step={step} />
          </li>
        ))}
      </ol>
      <h2>Final output</h2>
      <JsonBlock value={record.final_output} label="Final output" />
      <Evaluation runId={record.run_id} />
    </>
  );
}

/** The sum of the steps' recorded cost (`metadata.cost_usd`, when calls were priced). */
function costOf(steps: StepRecord[]): number | undefined {
  let total: number | undefined;
  for (const step of steps) {
    const cost = step.metadata.cost_usd;
    if (typeof cost === 'number') total = (total ?? 0) + cost;
  }
  return total === undefined ? undefined : Math.round(total * 1e6) / 1e6;
}

function StepPanel({ step }: { step: StepRecord }) {
  const cost = step.metadata.cost_usd;
  return (
    <details class="panel" open={step.status === 'failed'}>
      <summary>
        <strong>{step.step_name}</strong> <StateBadge state={step.status} />
        {step.duration_ms > 0 ? ` ${formatMs(step.duration_ms)}` : ''}
      </summary>
      <Facts
        rows={[
          ['Agent', step.agent],
          ['Tier', step.tier],
          ['Model', step.model_used],
          [
            'Tokens',
            step.tokens_used === null
              ? undefined
              : `${step.tokens_used.total} (${step.tokens_used.input} in, ${step.tokens_used.output} out)`,
          ],
          ['Cost (USD)', typeof cost === 'number' ? cost : undefined],
          ['Retries', step.retry_count > 0 ? step.retry_count : undefined],
          ['Started', formatTime(step.start_time)],
          ['Skipped because', step.metadata.skip_reason],
          [
            'Reused from',
            step.metadata.reused_from === undefined ? undefined : (
              <a href={href('runs', step.metadata.reused_from.run_id)}>
                {step.metadata.reused_from.run_id}
              </a>
            ),
          ],
        ]}
      />
      {step.error === null ? null : (
        <p class="error">
          Error: <code>{step.error}</code>
        </p>
      )}
      <h3>Inputs</h3>
      <JsonBlock value={step.input} label={`Inputs of ${step.step_name}`} />
      <h3>Outputs</h3>
      <JsonBlock value={step.output} label={`Outputs of ${step.step_name}`} />
    </details>
  );
}

function Explain({ runId, status }: { runId: string; status: string }) {
  const [open, setOpen] = useState(moving(status));
  const explain = useApi<RunExplanationResponse>(open ? `/api/runs/${seg(runId)}/explain` : null);
  usePolling(explain.reload, 2000, open && moving(status));
  return (
    <section class="panel" aria-labelledby="explain-title">
      <h2 id="explain-title">Why is it not moving?</h2>
      {!open ? (
        <button type="button" class="secondary" onClick={() => setOpen(true)}>
          Explain this run
        </button>
      ) : null}
      <ErrorNote error={explain.error} />
      {explain.data === undefined ? null : (
        <div aria-live="polite">
          <p>
            <StateBadge state={explain.data.reason} /> {explain.data.message}
          </p>
          {explain.data.failed_step ? (
            <p>
              Failed step: <code>{explain.data.failed_step}</code>
              {explain.data.error ? ` (${explain.data.error})` : ''}
            </p>
          ) : null}
          {explain.data.steps.length > 0 ? (
            <ul aria-label="Unfinished steps">
              {explain.data.steps.map((step) => (
                <li key={step.step}>
                  <strong>{step.step}</strong> <StateBadge state={step.status} />
                  <ul>
                    {step.waits.map((wait, i) => (
                      <li key={i}>
                        <code>{wait.reason}</code>: {wait.message}
                        {WAITS_FOR_A_PERSON.has(wait.reason) ? (
                          <>
                            {' '}
                            <a href="#/inbox">Answer in the Inbox</a>
                          </>
                        ) : null}
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      )}
    </section>
  );
}

function RunActions({ record, reload }: { record: RunRecord; reload: () => void }) {
  const firstFailed = record.steps.find((s) => s.status === 'failed')?.step_name;
  const [step, setStep] = useState(firstFailed ?? record.steps[0]?.step_name ?? '');
  const [inputs, setInputs] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Error | undefined>(undefined);
  if (moving(record.status)) return null;
  const interrupted = record.status === 'failed' && record.error === 'interrupted';
  const act = async (work: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setFailure(undefined);
    try {
      await work();
    } catch (error) {
      setFailure(error instanceof Error ? error : new Error(String(error)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="rerun-title">
      <h2 id="rerun-title">Rerun from a step</h2>
      <p class="hint">
        A new run reuses the recorded outcomes of the steps upstream of the chosen step and runs it
        and every step downstream.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void act(async () => {
            let parsed: unknown;
            if (inputs.trim() !== '') {
              try {
                parsed = JSON.parse(inputs);
              } catch {
                throw new Error('New inputs: not valid JSON');
              }
            }
            const res = await api.post<WorkflowRunResponse>(
              `/api/runs/${seg(record.run_id)}/rerun`,
              {
                from_step: step,
                ...(parsed === undefined ? {} : { inputs: parsed }),
              },
            );
            navigate(href('runs', res.run_id));
          });
        }}
      >
        <label for="rerun-step">From step</label>
        <select id="rerun-step" value={step} onChange={(e) => setStep(e.currentTarget.value)}>
          {record.steps.map((s) => (
            <option key={s.step_name} value={s.step_name}>
              {s.step_name} ({s.status})
            </option>
          ))}
        </select>
        <label for="rerun-inputs">New input values (JSON, optional)</label>
        <textarea
          id="rerun-inputs"
          placeholder='{"label": "demo"}'
          value={inputs}
          onInput={(e) => setInputs(e.currentTarget.value)}
        />
        <div class="row" style="margin-top:0.6rem">
          <button type="submit" disabled={busy || step === ''}>
            Rerun from {step}
          </button>
          {interrupted ? (
            <button
              type="button"
              class="secondary"
              disabled={busy}
              onClick={() =>
                void act(async () => {
                  await api.post(`/api/runs/${seg(record.run_id)}/resume`);
                  reload();
                })
              }
            >
              Resume this run
            </button>
          ) : null}
        </div>
      </form>
      <ErrorNote error={failure} />
    </section>
  );
}

function Evaluation({ runId }: { runId: string }) {
  const { data, error } = useApi<RunEvaluationDetailResponse>(`/api/runs/${seg(runId)}/evaluation`);
  if (error !== undefined) return <ErrorNote error={error} />;
  if (data === undefined || data.evaluation_status === 'not_requested') return null;
  const evaluation = data.evaluation;
  return (
    <section class="panel" aria-labelledby="evaluation-title">
      <h2 id="evaluation-title">Evaluation</h2>
      <Facts
        rows={[
          ['Status', <StateBadge state={data.evaluation_status} />],
          [
            'Dataset',
            data.dataset === null
              ? undefined
              : `${data.dataset.source}/${data.dataset.id} #${data.dataset.sample_index}`,
          ],
          ['Error', data.error ?? undefined],
          ['Rubric', evaluation?.rubric],
          [
            'Score',
            evaluation === null ? undefined : `${evaluation.overall_score} (${evaluation.grade})`,
          ],
          ['Passed', evaluation === null ? undefined : evaluation.passed ? 'yes' : 'no'],
          ['Pass threshold', evaluation?.pass_threshold],
          [
            'Judge',
            evaluation === null
              ? undefined
              : `${evaluation.judge.status}${evaluation.judge.model ? ` (${evaluation.judge.model})` : ''}`,
          ],
        ]}
      />
      {evaluation === null ? null : (
        <>
          <h3>Criteria</h3>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Criteria">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Criterion</th>
                  <th scope="col">Score</th>
                  <th scope="col">Weight</th>
                  <th scope="col">Floor</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {evaluation.criteria.map((c) => (
                  <tr key={c.criterion}>
                    <td>{c.name}</td>
                    <td>{c.applicable ? `${c.score} / ${c.max_score}` : 'not applicable'}</td>
                    <td>{c.weight}</td>
                    <td>
                      {c.critical_floor === null ? '' : c.critical_floor}
                      {c.floor_violated ? ' (violated)' : ''}
                    </td>
                    <td>{c.error ?? c.detail ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h3>Score layers</h3>
          <Facts
            rows={[
              ['Weighted', evaluation.score_layers.weighted],
              ['After floors', evaluation.score_layers.after_floors],
              ['After gates', evaluation.score_layers.after_gates],
            ]}
          />
          <h3>Hard gates</h3>
          <ul aria-label="Hard gates">
            {Object.entries(evaluation.hard_gates).map(([gate, ok]) => (
              <li key={gate}>
                {gate}: <StateBadge state={ok === true ? 'passed' : 'failed'} />
              </li>
            ))}
          </ul>
          {evaluation.floor_violations.length > 0 ? (
            <>
              <h3>Floor violations</h3>
              <ul>
                {evaluation.floor_violations.map((v) => (
                  <li key={v.criterion}>
                    {v.criterion}: {v.raw_score} under its floor {v.critical_floor}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </>
      )}
    </section>
  );
}
