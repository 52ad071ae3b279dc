/**
 * One error type for the whole runtime. Every error that may reach a client carries a stable
 * `code` from {@link ERROR_CODES}, an HTTP `status`, and `expose` (whether its message is safe
 * to show). The HTTP error funnel is the only place that turns these into response bodies.
 */
export const ERROR_CODES = {
  VALIDATION: 'validation_error',
  WORKFLOW_INVALID: 'workflow_invalid',
  INPUT_INVALID: 'input_invalid',
  NOT_FOUND: 'not_found',
  WORKFLOW_NOT_FOUND: 'workflow_not_found',
  RUN_NOT_FOUND: 'run_not_found',
  APPROVAL_NOT_FOUND: 'approval_not_found',
  CONFLICT: 'conflict',
  AUTH_REQUIRED: 'auth_required',
  RATE_LIMITED: 'rate_limited',
  TOO_MANY_ACTIVE_RUNS: 'too_many_active_runs',
  RUNS_BUDGET_SPENT: 'runs_budget_spent',
  BAD_REQUEST: 'bad_request',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  BLOCKED: 'input_blocked',
  ADAPTER_UNKNOWN: 'adapter_unknown',
  ADAPTER_UNAVAILABLE: 'adapter_unavailable',
  DEPENDENCY_UNAVAILABLE: 'dependency_unavailable',
  CONFIG: 'config_error',
  LLM_NOT_CONFIGURED: 'llm_not_configured',
  LLM_PROVIDER: 'llm_provider_error',
  LLM_OUTPUT: 'llm_output_invalid',
  RUNTIME_CLOSED: 'runtime_closed',
  RUNS_DIR_UNAVAILABLE: 'runs_dir_unavailable',
  HISTORY_LOADING: 'history_loading',
  TOOL: 'tool_error',
  MEMORY_STORE: 'memory_store_error',
  INTERNAL: 'internal_error',
} as const;
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** One entry of a validation error list, in the spec's 422 shape. */
export interface ErrorDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface AppErrorOptions {
  status?: number;
  expose?: boolean;
  details?: ErrorDetail[];
  cause?: unknown;
  headers?: Record<string, string>;
  /**
   * The level its request is logged at instead of the status's, for an expected refusal that
   * is no fault (503 while shutting down): one access record at that level, no error record, no
   * stack. @default by status: 5xx at error, the rest at info
   */
  logLevel?: 'info' | 'warn';
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly expose: boolean;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;
  readonly logLevel: 'info' | 'warn' | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? 500;
    this.expose = options.expose ?? this.status < 500;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.logLevel = options.logLevel;
  }
}

/** 422 with the spec's `{detail: [{loc, msg, type}]}` list. */
export class ValidationError extends AppError {
  /** What is wrong, one entry per problem (`loc`, `msg`, `type`): always present. */
  declare readonly details: ErrorDetail[];

  constructor(message: string, details: ErrorDetail[], code: ErrorCode = ERROR_CODES.VALIDATION) {
    super(code, message, { status: 422, details });
    this.name = 'ValidationError';
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, code: ErrorCode = ERROR_CODES.NOT_FOUND) {
    super(code, message, { status: 404 });
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.CONFLICT, message, { status: 409 });
    this.name = 'ConflictError';
  }
}

export class AuthError extends AppError {
  constructor(message = 'Missing or invalid API key') {
    super(ERROR_CODES.AUTH_REQUIRED, message, {
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
    this.name = 'AuthError';
  }
}

export class RateLimitedError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(
    message: string,
    retryAfterSeconds: number,
    headers: Record<string, string> = {},
    code: ErrorCode = ERROR_CODES.RATE_LIMITED,
  ) {
    const retry = Math.max(1, Math.ceil(retryAfterSeconds));
    super(code, message, {
      status: 429,
      headers: { ...headers, 'Retry-After': String(retry) },
    });
    this.name = 'RateLimitedError';
    this.retryAfterSeconds = retry;
  }
}

/**
 * A run refused because `maxActiveRuns` runs are already active (429, code
 * `too_many_active_runs`, `Retry-After`). Nothing was started; try again once a run has ended.
 */
export class TooManyActiveRunsError extends RateLimitedError {
  /** The runtime's `maxActiveRuns`. */
  readonly limit: number;
  constructor(limit: number, retryAfterSeconds: number) {
    super(
      `too many active runs: ${limit} are running, the most this service runs at once; try again later`,
      retryAfterSeconds,
      {},
      ERROR_CODES.TOO_MANY_ACTIVE_RUNS,
    );
    this.name = 'TooManyActiveRunsError';
    this.limit = limit;
  }
}

/**
 * A run refused because the active runs already hold (nearly) all the bytes of step inputs and
 * outputs the runtime allows them (`maxRunsHeldBytes`, AGENTIC_MAX_RUNS_HELD_BYTES): 503, code
 * `runs_budget_spent`, `Retry-After`. Nothing was started; try again once runs have ended.
 */
export class RunsBudgetSpentError extends AppError {
  /** Bytes the active runs hold. */
  readonly heldBytes: number;
  /** The runtime's `maxRunsHeldBytes`. */
  readonly limit: number;
  /** Seconds to wait before trying again (also the `Retry-After` header). */
  readonly retryAfterSeconds: number;
  constructor(heldBytes: number, limit: number, retryAfterSeconds: number) {
    const retry = Math.max(1, Math.ceil(retryAfterSeconds));
    super(
      ERROR_CODES.RUNS_BUDGET_SPENT,
      `the active runs hold ${heldBytes} bytes of step inputs and outputs, near the ${limit} this service allows (AGENTIC_MAX_RUNS_HELD_BYTES); try again later`,
      { status: 503, expose: true, headers: { 'Retry-After': String(retry) } },
    );
    this.name = 'RunsBudgetSpentError';
    this.heldBytes = heldBytes;
    this.limit = limit;
    this.retryAfterSeconds = retry;
  }
}

export class AdapterUnavailableError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.ADAPTER_UNAVAILABLE, message, { status: 501, expose: true });
    this.name = 'AdapterUnavailableError';
  }
}

export class DependencyError extends AppError {
  constructor(message: string, cause?: unknown) {
    super(ERROR_CODES.DEPENDENCY_UNAVAILABLE, message, { status: 503, expose: true, cause });
    this.name = 'DependencyError';
  }
}

/** Bad configuration: the process prints the message (no stack) and exits 1. */
export class ConfigError extends AppError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(ERROR_CODES.CONFIG, `Invalid configuration:\n  - ${problems.join('\n  - ')}`, {
      status: 500,
      expose: false,
    });
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** A message safe to record in a run file or event: never a stack trace. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  return 'unknown error';
}
