/**
 * The HTTP client of commands that talk to a running service (`agentic approvals`): its base
 * URL from `--url`, the API key of `AGENTIC_API_KEY` as a bearer token. A service that cannot be
 * reached, does not answer, or refuses the key is one message naming the URL, never a stack.
 */
import { InvalidArgumentError } from 'commander';
import { CliError } from './io.js';

/** Where `agentic serve` listens by default (AGENTIC_HOST, AGENTIC_PORT). */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8010';

/** Longest wait for an answer, in ms: these are small requests to a service at hand. */
const ANSWER_TIMEOUT_MS = 30_000;

/** An answer of the service other than a refused key. */
export interface ServiceAnswer {
  status: number;
  body: unknown;
}

export interface ServiceClient {
  readonly url: string;
  /** Sends one request; rejects with a CliError when there is no answer or the key is refused. */
  request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ServiceAnswer>;
}

/** `--url`: an http(s) URL, kept without its trailing slash. */
export function parseServiceUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError('an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('an http:// or https:// URL');
  }
  return text.replace(/\/+$/, '');
}

/** The `detail` of an error answer, as one line. */
export function detailOf(body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((entry: { loc?: unknown[]; msg?: unknown }) =>
        `${(entry.loc ?? []).join('.')}: ${String(entry.msg)}`.replace(/^: /, ''),
      )
      .join('; ');
  }
  return 'no detail';
}

export function createServiceClient(url: string, apiKey: string | undefined): ServiceClient {
  return {
    url,
    async request(method, path, body) {
      let response: Response;
      try {
        response = await fetch(`${url}${path}`, {
          method,
          headers: {
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
        });
      } catch (error) {
        throw unreachable(url, error);
      }
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new CliError(
          `the answer of ${url}${path} is not JSON (HTTP ${response.status}): is it an agentic service? (--url)`,
        );
      }
      if (response.status === 401) {
        throw new CliError(
          apiKey === undefined
            ? `the service at ${url} needs an API key: set AGENTIC_API_KEY`
            : `the service at ${url} refused the API key (AGENTIC_API_KEY)`,
        );
      }
      return { status: response.status, body: parsed };
    },
  };
}

function unreachable(url: string, error: unknown): CliError {
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') {
    return new CliError(
      `no answer from the service at ${url} within ${ANSWER_TIMEOUT_MS / 1000} s`,
    );
  }
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : 'unreachable';
  return new CliError(
    `cannot reach the service at ${url} (${code}): is agentic serve running there? (--url)`,
  );
}
