/**
 * The console's one way to the service: same-origin requests to documented endpoints only
 * (docs/http-api.md). The API key, when the service asks for one (a 401), is entered once in the
 * key form, kept in sessionStorage for this tab's session and sent as `Authorization: Bearer`;
 * on a WebSocket, where a browser cannot set headers, as a subprotocol
 * (src/security/ws-protocol-key.ts). Never in a URL.
 */
import { useEffect, useState } from 'preact/hooks';
import type { WorkflowEvent } from '../../src/generated/events';
import { WS_KEY_PROTOCOL_PREFIX, WS_PROTOCOL } from '../../src/security/ws-protocol-key';

const KEY_STORAGE = 'agentic-runtime.api-key';

/** A non-2xx answer: its status and the `detail` the service sent. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

interface AuthState {
  /** The service answered 401 (or closed a socket 1008) with the key we hold, or without one. */
  required: boolean;
  /** Bumped when the key changes: loaders run again. */
  version: number;
}

let auth: AuthState = { required: false, version: 0 };
const authListeners = new Set<() => void>();

function setAuth(next: AuthState): void {
  auth = next;
  for (const listener of authListeners) listener();
}

/** The key of this tab's session, if one was entered. */
export function storedKey(): string | undefined {
  return sessionStorage.getItem(KEY_STORAGE) ?? undefined;
}

/** Keeps `key` for the session and retries what waited for it. */
export function saveKey(key: string): void {
  sessionStorage.setItem(KEY_STORAGE, key);
  setAuth({ required: false, version: auth.version + 1 });
}

/** Forgets the key (the form asks again at the next 401). */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  setAuth({ required: false, version: auth.version + 1 });
}

function keyRequired(): void {
  if (!auth.required) setAuth({ ...auth, required: true });
}

/** The auth state, re-rendering on change. */
export function useAuth(): AuthState {
  const [state, setState] = useState(auth);
  useEffect(() => {
    const listener = (): void => setState(auth);
    authListeners.add(listener);
    listener();
    return () => {
      authListeners.delete(listener);
    };
  }, []);
  return state;
}

function detailText(body: unknown, fallback: string): string {
  if (typeof body !== 'object' || body === null || !('detail' in body)) return fallback;
  const detail = body.detail;
  if (typeof detail === 'string') return detail;
  // A 422 list: [{loc, msg}]
  if (Array.isArray(detail)) {
    return detail
      .map((entry: unknown) => {
        if (typeof entry !== 'object' || entry === null) return String(entry);
        const { loc, msg } = entry as { loc?: unknown[]; msg?: string };
        return `${(loc ?? []).join('.')}: ${msg ?? ''}`;
      })
      .join('; ');
  }
  return fallback;
}

/** One JSON request; throws {@link ApiError} for a non-2xx answer (401 opens the key form). */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const key = storedKey();
  if (key !== undefined) headers.Authorization = `Bearer ${key}`;
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (res.status === 401) keyRequired();
  if (!res.ok)
    throw new ApiError(res.status, detailText(parsed, `${res.status} ${res.statusText}`));
  return parsed as T;
}

export const api = {
  get: <T>(path: string): Promise<T> => request<T>('GET', path),
  post: <T>(path: string, body?: unknown): Promise<T> => request<T>('POST', path, body ?? {}),
};

/** A path segment, encoded. */
export const seg = (value: string): string => encodeURIComponent(value);

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** GETs `path` (null: nothing yet), again when the key changes or on `reload()`. */
export function useApi<T>(path: string | null): Loaded<T> {
  const { version } = useAuth();
  const [tick, setTick] = useState(0);
  const [state, setState] = useState<Omit<Loaded<T>, 'reload'>>({
    data: undefined,
    error: undefined,
    loading: path !== null,
  });
  useEffect(() => {
    if (path === null) return undefined;
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    api.get<T>(path).then(
      (data) => {
        if (live) setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (!live) return;
        const failure = error instanceof Error ? error : new Error(String(error));
        setState({ data: undefined, error: failure, loading: false });
      },
    );
    return () => {
      live = false;
    };
  }, [path, version, tick]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}

function base64url(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export interface RunSocket {
  close(): void;
}

/**
 * Streams a run's events (`WS /ws/execution/{run_id}`: replay, then live). The key goes as a
 * subprotocol; a 1008 close (key refused) opens the key form.
 */
export function openRunSocket(
  runId: string,
  onEvent: (event: WorkflowEvent) => void,
  onClose: (code: number) => void,
): RunSocket {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const url = `${scheme}://${location.host}/ws/execution/${seg(runId)}`;
  const key = storedKey();
  const socket =
    key === undefined
      ? new WebSocket(url)
      : new WebSocket(url, [WS_PROTOCOL, WS_KEY_PROTOCOL_PREFIX + base64url(key)]);
  let closedByUs = false;
  socket.addEventListener('message', (message: MessageEvent<unknown>) => {
    if (typeof message.data !== 'string') return;
    onEvent(JSON.parse(message.data) as WorkflowEvent);
  });
  socket.addEventListener('close', (event) => {
    if (event.code === 1008) keyRequired();
    if (!closedByUs) onClose(event.code);
  });
  return {
    close: () => {
      closedByUs = true;
      socket.close();
    },
  };
}
