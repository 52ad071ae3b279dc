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
  RUN_NOT_RESUMABLE: 'run_not_resumable',
  APPROVAL_NOT_FOUND: 'approval_not_found',
  CONFLICT: 'conflict',
  AUTH_REQUIRED: 'auth_required',
  RATE_LIMITED: 'rate_limited',
  TOO_MANY_ACTIVE_RUNS: 'too_many_active_runs',
  RUNS_BUDGET_SPENT: 'runs_budget_spent',
  BUDGET_EXCEEDED: 'budget_exceeded',
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

/** What the error catalogue says of one code: its HTTP status(es) and when it is raised. */
export interface ErrorCodeInfo {
  /** The HTTP status(es) an error of this code carries (the first is the usual one). */
  readonly status: readonly number[];
  /** When it is raised and what the client or embedder sees; docs/errors.md is generated from it. */
  readonly description: string;
}

/**
 * The error catalogue: every code with its status and meaning, the single source of
 * docs/errors.md (`npm run gen`). A code without an entry does not compile.
 */
export const ERROR_CATALOGUE: { readonly [code in ErrorCode]: ErrorCodeInfo } = {
  budget_exceeded: {
    status: [409],
    description:
      "A run reached its budget (`budget:` of the workflow or the run request, docs/budgets.md) and its policy is `fail`, or a person denied its raise: the model call that would have gone past it is not made, its step fails with `budget_exceeded: …` and so does the run. Never an HTTP answer: it is a step's and a run's error.",
  },
  validation_error: {
    status: [422],
    description:
      'The request or call is invalid: a 422 with the `{detail: [{loc, msg, type}]}` list (`loc` starting at `body`, `query` or `path`). Also an evaluation asked of a service without evaluation, and a run queued to workers naming a workflow outside the workflows directory.',
  },
  workflow_invalid: {
    status: [422],
    description:
      'A workflow does not load: invalid YAML (over a size, nesting or alias bound included), an unknown key, a duplicate step, an unknown or cyclic dependency, a bad expression, a name that is not its file stem. `ValidationError` with every problem listed.',
  },
  input_invalid: {
    status: [422],
    description:
      "A run's inputs do not match the workflow's declared inputs (type, `enum`, `required`, an undeclared key): all problems in one `ValidationError`, `loc` `['body', 'input_data', name]` over HTTP, `['input', name]` in the embedding API.",
  },
  not_found: {
    status: [404],
    description:
      'Something asked for by id does not exist: a dataset, an evaluation batch, an unknown `/api/*` path, a path refused by path containment (`PathEscapeError`). The detail never echoes an unsafe id.',
  },
  workflow_not_found: {
    status: [404, 422],
    description:
      'No workflow has this name: 404 on `/api/workflows/{name}/…`, 422 (`loc` `["body", "workflow"]`) in the body of `POST /api/run`.',
  },
  run_not_found: {
    status: [404],
    description:
      'No run has this run id or run-file name (`GET /api/runs/{filename}`, cancel, evaluation, the SSE stream).',
  },
  run_not_resumable: {
    status: [409, 422],
    description:
      '`POST /api/runs/{run_id}/resume`, `runtime.resume`: 409 when the run is not interrupted (it ended otherwise, is active here, or its owner process is alive), 422 when it cannot go on: the workflow it started with is gone (no pinned copy, and the YAML changed or was removed) or no longer matches its run file (`RunNotResumableError`). On an api instance the run is queued and a worker resumes it.',
  },
  approval_not_found: {
    status: [404],
    description:
      '`POST /api/approvals/{call_id}`: no tool call waits for approval with this id (never existed, or its worker died).',
  },
  conflict: {
    status: [409],
    description:
      'The request contradicts the current state: a `run_id` already active or in the history, a run already finished (cancel), a tool call already decided, timed out or cancelled, a rerun of a run still running or whose workflow is gone or no longer has the step.',
  },
  auth_required: {
    status: [401],
    description:
      'A protected path without a valid API key (`AGENTIC_API_KEY`): a 401 with `WWW-Authenticate: Bearer`; counts towards the lockout.',
  },
  rate_limited: {
    status: [429],
    description:
      'The client passed the rate limit (`AGENTIC_RATE_LIMIT_DEFAULT`, `Rate limit exceeded`) or is locked out after failed keys (`Too many failed authentication attempts`): a 429 with `Retry-After`.',
  },
  too_many_active_runs: {
    status: [429],
    description:
      '`AGENTIC_MAX_ACTIVE_RUNS` runs are already active: nothing started, 429 with `Retry-After: 5` (`TooManyActiveRunsError`, with `limit` and `retryAfterSeconds`).',
  },
  runs_budget_spent: {
    status: [503],
    description:
      'The active runs hold nearly all the step input and output bytes allowed (`AGENTIC_MAX_RUNS_HELD_BYTES`): nothing started, 503 with `Retry-After: 5` (`RunsBudgetSpentError`, with `heldBytes`, `limit`, `retryAfterSeconds`).',
  },
  bad_request: {
    status: [400, 415],
    description:
      'The request cannot be read: malformed JSON or an aborted body (400), a `Content-Encoding` or a charset other than UTF-8 (415), a body nested deeper than 128 levels (400).',
  },
  payload_too_large: {
    status: [413],
    description:
      'The request body is larger than `AGENTIC_MAX_BODY_BYTES` (checked on `Content-Length` first, then while streaming); the connection is closed.',
  },
  input_blocked: {
    status: [400],
    description:
      'The sanitizer blocked the body (a private key, a prompt injection, a high-severity Unicode anomaly): `Request blocked by sanitization policy: <CATEGORIES>`, naming categories, never the matched text.',
  },
  adapter_unknown: {
    status: [422],
    description:
      'A run names an engine adapter that does not exist (`adapter`: only `graph` and `native`).',
  },
  adapter_unavailable: {
    status: [501],
    description:
      'The adapter exists but is not in this build (`GET /api/workflows/{name}/machine` without the graph adapter, a run asking for it).',
  },
  dependency_unavailable: {
    status: [503],
    description:
      'Something the service needs is not there: Redis (new runs refused until it is back), the run queue, a workflows directory that is missing or not writable (saving), the run file that cannot be written, an optional docs package (`swagger-ui-dist`, `redoc`) not installed.',
  },
  config_error: {
    status: [500],
    description:
      'Bad configuration: invalid variables (one message listing each with a hint), a models file or agent catalogue that does not load, an `AGENTIC_AGENTS_MODULE` that cannot be loaded, unreachable Redis at start-up, invalid runtime options. At start-up the process prints it without a stack and exits 1.',
  },
  llm_not_configured: {
    status: [503],
    description:
      'No model can answer: no provider configured for the tier (the message names the variables to set), or no chain for it. An LLM step fails with it.',
  },
  llm_provider_error: {
    status: [502],
    description:
      'A model provider failed (`LlmError`, with a `kind`: `rate_limited`, `auth_error`, `not_found`, `context_length`, `invalid_request`, `transient`); the message is scrubbed of keys. A step fails with it after the router tried every candidate.',
  },
  llm_output_invalid: {
    status: [502],
    description:
      "The model's answer cannot fill the step's declared outputs (`model answer cannot fill the declared outputs (a, b): …`); the attempt fails and is retried per `max_attempts`.",
  },
  runtime_closed: {
    status: [503],
    description:
      'The runtime is shutting down: a new run is refused with `shutting down`, `Retry-After: 5` and `Connection: close`, logged at info.',
  },
  runs_dir_unavailable: {
    status: [503],
    description:
      'New runs are refused because run records cannot be written (a failing write waits to be retried, or `AGENTIC_WRITE_QUEUE_MAX` records are queued): 503 with `Retry-After: 5`.',
  },
  history_loading: {
    status: [503],
    description:
      'The run history is still loading after start-up: `GET /api/runs`, the summary and id lookups answer 503 with `Retry-After: 2` rather than an incomplete answer.',
  },
  tool_error: {
    status: [400],
    description:
      'A tool call failed, was refused or was denied (`tool <name>: <reason>`, `ToolError` with `toolName` and `operation`); the step fails (or, in an agent loop, the model gets the error), never the process.',
  },
  memory_store_error: {
    status: [500],
    description:
      'The memory store cannot store a value (not JSON), read its file (unreadable, foreign) or take its lock (a live second writer), or an embedding failed (`MemoryStoreError`).',
  },
  internal_error: {
    status: [500],
    description:
      'An unexpected failure (the sanitizer itself failing, fail-closed): the client gets `{detail: "Internal Server Error"}`, the log the cause; never a stack in a response.',
  },
};

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

/** A run that cannot be resumed: 409 (not interrupted) or 422 (cannot go on); see the catalogue. */
export class RunNotResumableError extends AppError {
  constructor(message: string, status: 409 | 422) {
    super(ERROR_CODES.RUN_NOT_RESUMABLE, message, { status, expose: true });
    this.name = 'RunNotResumableError';
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
