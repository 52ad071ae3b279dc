/**
 * Hash routes (`#/workflows/code_review`): the service's SPA fallback serves the index for any
 * other path, and a hash never reaches the server, so a route needs nothing from it.
 */
import { useEffect, useState } from 'preact/hooks';

/** The current route's path (`/workflows/x`), `/` for none. */
export function currentPath(): string {
  const hash = location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

/** The route path, re-rendering on navigation. */
export function useRoutePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const onChange = (): void => setPath(currentPath());
    addEventListener('hashchange', onChange);
    // The hash may have changed between the first render and this effect (a link followed, or
    // the address typed, while the page was loading): that hashchange was missed, so read it now.
    onChange();
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return path;
}

/** The href of a route path built from segments, each encoded. */
export function href(...segments: string[]): string {
  return `#/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
}

/** Goes to a route (an href from {@link href}). */
export function navigate(to: string): void {
  location.hash = to.replace(/^#/, '');
}

/** Matches `/a/:b` against a path: the decoded params, or undefined. */
export function matchRoute(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const actual = have[i] ?? '';
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    } else if (part !== actual) {
      return undefined;
    }
  }
  return params;
}
