import { ApiError } from '../api';

/** An error from the API (its status and detail), announced to screen readers. */
export function ErrorNote({ error }: { error: Error | undefined }) {
  if (error === undefined) return null;
  // A 401 is answered by the key form.
  if (error instanceof ApiError && error.status === 401) return null;
  return (
    <p class="error" role="alert">
      {error instanceof ApiError ? `${error.status}: ` : ''}
      {error.message}
    </p>
  );
}
