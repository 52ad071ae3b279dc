/**
 * The console's pages: one row per route. A row with `nav` is linked from the navigation bar;
 * a page reached only through links (a live run) has none. Rows are tried in order.
 */
import type { ComponentChildren } from 'preact';
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
];
