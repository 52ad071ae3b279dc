/**
 * Runs: the history (`GET /api/runs`, newest first) with its filters: workflow, status, a
 * start-time range (`since`/`until`) and how many; each run linked to its detail page.
 */
import { useState } from 'preact/hooks';
import type { RunListResponse } from '../../../src/generated/api/run-list-response';
import type { WorkflowsResponse } from '../../../src/generated/api/workflows-response';
import { useApi } from '../api';
import { ErrorNote } from '../components/error-note';
import { formatMs, formatTime, StateBadge } from '../components/run-facts';
import { href } from '../router';

interface Filters {
  workflow: string;
  status: string;
  since: string;
  until: string;
  limit: string;
}

const EMPTY: Filters = { workflow: '', status: '', since: '', until: '', limit: '50' };

/** A `datetime-local` value (the browser's time zone) as an ISO instant. */
const isoOf = (local: string): string | undefined => {
  if (local === '') return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
};

function listPath(filters: Filters): string {
  const query = new URLSearchParams();
  if (filters.workflow !== '') query.set('workflow', filters.workflow);
  if (filters.status !== '') query.set('status', filters.status);
  const since = isoOf(filters.since);
  if (since !== undefined) query.set('since', since);
  const until = isoOf(filters.until);
  if (until !== undefined) query.set('until', until);
  query.set('limit', filters.limit);
  return `/api/runs?${query.toString()}`;
}

export function RunsPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const workflows = useApi<WorkflowsResponse>('/api/workflows');
  const { data, error, loading, reload } = useApi<RunListResponse>(listPath(applied));
  const set = (key: keyof Filters) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [key]: event.currentTarget.value });
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <form
        class="panel filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          setApplied(draft);
        }}
      >
        <div>
          <label for="runs-workflow">Workflow</label>
          <select id="runs-workflow" value={draft.workflow} onChange={set('workflow')}>
            <option value="">All workflows</option>
            {(workflows.data?.workflows ?? []).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="runs-status">Status</label>
          <select id="runs-status" value={draft.status} onChange={set('status')}>
            <option value="">Any status</option>
            {['running', 'pending', 'success', 'failed'].map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="runs-since">Started from</label>
          <input
            id="runs-since"
            type="datetime-local"
            step="1"
            value={draft.since}
            onInput={set('since')}
          />
        </div>
        <div>
          <label for="runs-until">Started until</label>
          <input
            id="runs-until"
            type="datetime-local"
            step="1"
            value={draft.until}
            onInput={set('until')}
          />
        </div>
        <div>
          <label for="runs-limit">At most</label>
          <select id="runs-limit" value={draft.limit} onChange={set('limit')}>
            {['20', '50', '200', '1000'].map((n) => (
              <option key={n} value={n}>
                {n} runs
              </option>
            ))}
          </select>
        </div>
        <div class="row">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft(EMPTY);
              setApplied(EMPTY);
            }}
          >
            Clear
          </button>
          <button type="button" class="secondary" onClick={reload}>
            Refresh
          </button>
        </div>
      </form>
      <ErrorNote error={error ?? workflows.error} />
      {loading && data === undefined ? <p aria-live="polite">Loading…</p> : null}
      {data !== undefined && data.length === 0 ? <p>No run matches.</p> : null}
      {data !== undefined && data.length > 0 ? (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Run history">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Workflow</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Steps</th>
                <th scope="col">Score</th>
              </tr>
            </thead>
            <tbody>
              {data.map((run) => (
                <tr key={run.run_id}>
                  <td>
                    <a href={href('runs', run.run_id)}>{run.run_id}</a>
                  </td>
                  <td>{run.workflow_name}</td>
                  <td>
                    <StateBadge state={run.status} />
                  </td>
                  <td>{formatTime(run.start_time)}</td>
                  <td>{formatMs(run.total_duration_ms) ?? ''}</td>
                  <td>
                    {run.step_count}
                    {run.failed_step_count > 0 ? ` (${run.failed_step_count} failed)` : ''}
                  </td>
                  <td>
                    {run.evaluation_score === null || run.evaluation_score === undefined
                      ? ''
                      : `${run.evaluation_score}${run.evaluation_grade ? ` (${run.evaluation_grade})` : ''}`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
