/**
 * The console's pages: one row per route. A row with `nav` is linked from the navigation bar;
 * a page reached only through links (a live run) has none. Rows are tried in order.
 */
import type { ComponentChildren } from 'preact';
import { LiveRunPage } from './pages/live-run';
import { WorkflowPage } from './pages/workflow';
import { WorkflowsPage } from './pages/workflows';
import { DatasetPage, DatasetsPage } from './pages/datasets';
import { InboxPage } from './pages/inbox';
import { ModelsPage } from './pages/models';
import { RunDetailPage } from './pages/run-detail';
import { RunsPage } from './pages/runs';

export interface Route {
  /** `/a/:param` */
  pattern: string;
  /** Title of the browser tab. */
  title: (params: Record<string, string>) => string;
  render: (params: Record<string, string>) => ComponentChildren;
  /** Linked from the navigation bar with this label. */
  nav?: { label: string; href: string };
}

export const ROUTES: readonly Route[] = [
  {
    pattern: '/',
    title: () => 'Workflows',
    render: () => <WorkflowsPage />,
  },
  {
    pattern: '/workflows',
    title: () => 'Workflows',
    render: () => <WorkflowsPage />,
    nav: { label: 'Workflows', href: '#/workflows' },
  },
  {
    pattern: '/workflows/:name',
    title: ({ name }) => `Workflow ${name ?? ''}`,
    render: ({ name }) => <WorkflowPage key={name} name={name ?? ''} />,
  },
  {
    pattern: '/runs/:runId/live',
    title: ({ runId }) => `Run ${runId ?? ''}`,
    render: ({ runId }) => <LiveRunPage key={runId} runId={runId ?? ''} />,
  },
  {
    pattern: '/inbox',
    title: () => 'Inbox',
    render: () => <InboxPage />,
    nav: { label: 'Inbox', href: '#/inbox' },
  },
  {
    pattern: '/runs',
    title: () => 'Runs',
    render: () => <RunsPage />,
    nav: { label: 'Runs', href: '#/runs' },
  },
  {
    pattern: '/runs/:runId',
    title: ({ runId }) => `Run ${runId ?? ''}`,
    render: ({ runId }) => <RunDetailPage key={runId} runId={runId ?? ''} />,
  },
  {
    pattern: '/datasets',
    title: () => 'Datasets',
    render: () => <DatasetsPage />,
    nav: { label: 'Datasets', href: '#/datasets' },
  },
  {
    pattern: '/datasets/:source/:datasetId',
    title: ({ datasetId }) => `Dataset ${datasetId ?? ''}`,
    render: ({ source, datasetId }) => (
      <DatasetPage
        key={`${source}/${datasetId}`}
        source={source ?? ''}
        datasetId={datasetId ?? ''}
      />
    ),
  },
  {
    pattern: '/models',
    title: () => 'Models',
    render: () => <ModelsPage />,
    nav: { label: 'Models', href: '#/models' },
  },
];
