/**
 * The console's pages: one row per route. A row with `nav` is linked from the navigation bar;
 * a page reached only through links (a live run) has none. Rows are tried in order.
 */
import type { ComponentChildren } from 'preact';
import { LiveRunPage } from './pages/live-run';
import { WorkflowPage } from './pages/workflow';
import { WorkflowsPage } from './pages/workflows';

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
];
