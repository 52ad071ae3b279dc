import { useEffect } from 'preact/hooks';
import { KeyForm } from './components/key-form';
import { matchRoute, useRoutePath } from './router';
import { ROUTES } from './routes';

/** The layout: a skip link, the navigation bar, the key form when asked for, the page. */
export function App() {
  const path = useRoutePath();
  let page: { route: (typeof ROUTES)[number]; params: Record<string, string> } | undefined;
  for (const route of ROUTES) {
    const params = matchRoute(route.pattern, path);
    if (params !== undefined) {
      page = { route, params };
      break;
    }
  }
  const title = page?.route.title(page.params) ?? 'Not found';
  useEffect(() => {
    document.title = `${title} · agentic-runtime`;
  }, [title]);
  return (
    <>
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="#/workflows">
          agentic-runtime
        </a>
        <nav aria-label="Console">
          <ul>
            {ROUTES.map(({ pattern, nav }) =>
              nav === undefined ? null : (
                <li key={pattern}>
                  <a href={nav.href} aria-current={isCurrent(pattern, path) ? 'page' : undefined}>
                    {nav.label}
                  </a>
                </li>
              ),
            )}
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <KeyForm />
        {page === undefined ? (
          <section>
            <h1>Not found</h1>
            <p>
              No page at <code>{path}</code>. <a href="#/workflows">Workflows</a>
            </p>
          </section>
        ) : (
          page.route.render(page.params)
        )}
      </main>
    </>
  );
}

function isCurrent(pattern: string, path: string): boolean {
  return path === pattern || path.startsWith(`${pattern}/`);
}

// The skip link must not change the hash (the route lives there): focus the main region.
function skipToMain(event: MouseEvent): void {
  event.preventDefault();
  document.getElementById('main')?.focus();
}
