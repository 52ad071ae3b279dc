import { useState } from 'preact/hooks';
import type { WorkflowsResponse } from '../../../src/generated/api/workflows-response';
import { useApi } from '../api';
import { ErrorNote } from '../components/error-note';
import { href } from '../router';

/** The workflows of the service (`GET /api/workflows`), each linked to its DAG and run form. */
export function WorkflowsPage() {
  const { data, error, loading } = useApi<WorkflowsResponse>('/api/workflows');
  const [filter, setFilter] = useState('');
  const names = (data?.workflows ?? []).filter((name) =>
    name.toLowerCase().includes(filter.trim().toLowerCase()),
  );
  return (
    <section aria-labelledby="workflows-title">
      <h1 id="workflows-title">Workflows</h1>
      <label for="workflow-filter">Filter</label>
      <input
        id="workflow-filter"
        type="search"
        value={filter}
        onInput={(event) => setFilter(event.currentTarget.value)}
      />
      <ErrorNote error={error} />
      {loading && data === undefined ? <p aria-live="polite">Loading…</p> : null}
      {data !== undefined ? (
        <ul class="card-list" aria-label="Workflows">
          {names.map((name) => (
            <li key={name}>
              <a class="card" href={href('workflows', name)}>
                {name}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      {data !== undefined && names.length === 0 ? <p>No workflow matches.</p> : null}
    </section>
  );
}
