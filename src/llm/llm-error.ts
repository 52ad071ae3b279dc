import { AppError, ERROR_CODES } from '../errors.js';
import { scrubSecrets } from './scrub.js';
import { addUsage, type TokenUsage } from './types.js';

/** How a provider failure is classified; the router decides what to do next from it. */
export const LLM_ERROR_KINDS = {
  RATE_LIMITED: 'rate_limited',
  AUTH: 'auth_error',
  NOT_FOUND: 'not_found',
  INVALID_REQUEST: 'invalid_request',
  CONTEXT_LENGTH: 'context_length',
  TRANSIENT: 'transient',
} as const;
export type LlmErrorKind = (typeof LLM_ERROR_KINDS)[keyof typeof LLM_ERROR_KINDS];

export interface LlmErrorOptions {
  provider: string;
  /** Milliseconds the provider asked us to wait (429 Retry-After). */
  retryAfterMs?: number;
  /** HTTP status of the provider's answer, when there was one. */
  httpStatus?: number;
  cause?: unknown;
  /** Credential values to scrub from the message besides the patterns (the provider's key). */
  secrets?: readonly string[];
  /** No connection could be made (refused, no such host, connect timeout). @default false */
  unreachable?: boolean;
}

/**
 * A provider failure. The message is scrubbed of keys and bearer tokens before it is stored,
 * so it may go to logs, events and run files as it is.
 */
export class LlmError extends AppError {
  readonly kind: LlmErrorKind;
  readonly provider: string;
  readonly retryAfterMs: number | undefined;
  readonly httpStatus: number | undefined;
  /** No connection could be made: the provider, not the model, is away (router: its circuit). */
  readonly unreachable: boolean;
  /**
   * Tokens the call spent before it failed (the provider's usage seen so far), set by the
   * provider or the router; null when none were reported. A step counts them in `tokens_used`.
   */
  spentTokens: TokenUsage | null = null;
  constructor(kind: LlmErrorKind, message: string, options: LlmErrorOptions) {
    super(
      ERROR_CODES.LLM_PROVIDER,
      scrubSecrets(
        options.provider === '' ? message : `${options.provider}: ${message}`,
        options.secrets,
      ),
      {
        status: 502,
        expose: true,
        cause: options.cause,
      },
    );
    this.name = 'LlmError';
    this.kind = kind;
    this.provider = options.provider;
    this.retryAfterMs = options.retryAfterMs;
    this.httpStatus = options.httpStatus;
    this.unreachable = options.unreachable ?? false;
  }

  /** Whether another candidate (or a later attempt) may succeed where this one failed. */
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'transient';
  }
}

const CONTEXT_WORDS =
  /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|max_tokens.*exceed|exceeds the (?:maximum|context)/i;

/**
 * Classifies an HTTP error answer. `body` is the provider's error text (already read, bounded);
 * the message keeps the provider's own explanation when it gives one.
 */
export function classifyHttpError(
  provider: string,
  status: number,
  body: string,
  retryAfter: string | undefined,
  secrets: readonly string[] = [],
): LlmError {
  const detail = errorDetail(body);
  const message = `HTTP ${status}${detail === '' ? '' : `: ${detail}`}`;
  const base = { provider, httpStatus: status, secrets };
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    return new LlmError('rate_limited', message, {
      ...base,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status === 401 || status === 403) return new LlmError('auth_error', message, base);
  if (status === 404) return new LlmError('not_found', message, base);
  if (status === 413 || CONTEXT_WORDS.test(detail)) {
    return new LlmError('context_length', message, base);
  }
  if (status >= 400 && status < 500 && status !== 408 && status !== 409) {
    return new LlmError('invalid_request', message, base);
  }
  return new LlmError('transient', message, base);
}

/**
 * `error` carrying the tokens the provider reported before it (added to any it carries); other
 * errors (the caller's abort reason) and calls that reported nothing are returned as they are.
 */
export function withSpentTokens(error: unknown, usage: TokenUsage): unknown {
  if (error instanceof LlmError && usage.total > 0) {
    error.spentTokens = addUsage(error.spentTokens, usage);
  }
  return error;
}

/**
 * Codes of a connection that could not be made (net, DNS, undici's connect timeout); a reset or
 * a closed socket after connecting is not among them (the provider was there).
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A failure below HTTP (refused, reset, timed out, a broken stream). */
export function transportError(
  provider: string,
  error: unknown,
  secrets: readonly string[] = [],
): LlmError {
  const code = (error as { code?: unknown }).code;
  const text = error instanceof Error ? error.message : String(error);
  const message = typeof code === 'string' ? `${code}: ${text}` : text;
  return new LlmError('transient', message, {
    provider,
    cause: error,
    secrets,
    unreachable: typeof code === 'string' && UNREACHABLE_CODES.has(code),
  });
}

/** Retry-After in seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The provider's own message from its JSON error body (every protocol nests it differently). */
function errorDetail(body: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return '';
  try {
    const parsed = JSON.parse(trimmed) as unknown;
    const found = findMessage(parsed);
    if (found !== undefined) return oneLine(found);
  } catch {
    // Not JSON: the text itself (an HTML error page from a proxy, a plain message).
  }
  return oneLine(trimmed);
}

function findMessage(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.message === 'string') return record.message;
  if (record.error !== undefined) return findMessage(record.error);
  if (Array.isArray(value)) return findMessage(value[0]);
  return undefined;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
