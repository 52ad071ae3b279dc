import { useState } from 'preact/hooks';
import { saveKey, storedKey, useAuth } from '../api';

/**
 * Asks for the API key when the service answered 401 (or refused a socket): entered once, kept
 * for this tab's session (sessionStorage), sent in headers only.
 */
export function KeyForm() {
  const { required } = useAuth();
  const [value, setValue] = useState('');
  if (!required) return null;
  const hadKey = storedKey() !== undefined;
  return (
    <form
      class="key-form panel"
      aria-labelledby="key-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim() !== '') saveKey(value.trim());
        setValue('');
      }}
    >
      <h2 id="key-form-title">API key needed</h2>
      <p>
        {hadKey
          ? 'The service refused the key of this session.'
          : 'The service needs its API key (AGENTIC_API_KEY).'}{' '}
        It is kept for this browser tab only and sent in request headers, never in a URL.
      </p>
      <label for="api-key">API key</label>
      <div class="row">
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          autoFocus
        />
        <button type="submit">Use key</button>
      </div>
    </form>
  );
}
