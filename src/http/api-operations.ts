/**
 * Every HTTP operation the service answers, as data. `scripts/gen.ts` turns this table and the
 * schemas in `schemas/` into `schemas/openapi.json`; a test checks that every route the Koa
 * router registers is described here. Schemas are named by their `title`.
 */

export type HttpMethod = 'get' | 'post' | 'put';

export interface ApiParameter {
  name: string;
  in: 'path' | 'query';
  description: string;
  schema: Record<string, unknown>;
  required?: boolean;
}

export interface ApiResponse {
  description: string;
  /** Schema title; omitted for bodies that are not JSON. */
  schema?: string;
  /** @default application/json */
  contentType?: string;
}

export interface ApiOperation {
  method: HttpMethod;
  /** OpenAPI form: `/api/runs/{filename}`. */
  path: string;
  operationId: string;
  summary: string;
  /** What the answer holds and when it fails, beyond the summary (OpenAPI and docs/http-api.md). */
  description?: string;
  tag: string;
  /** Needs no API key (spec: Authentication, public paths). */
  public?: boolean;
  /** Kept for old clients; answered with a `Deprecation` header. */
  deprecated?: boolean;
  parameters?: ApiParameter[];
  requestSchema?: string;
  responses: Record<string, ApiResponse>;
}

const err = (description: string): ApiResponse => ({ description, schema: 'ErrorResponse' });
const invalid: ApiResponse = {
  description: 'Request validation failed',
  schema: 'ValidationErrorResponse',
};
const nameParam: ApiParameter = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'Workflow name (file stem).',
  schema: { type: 'string' },
};
const workflowQuery: ApiParameter = {
  name: 'workflow',
  in: 'query',
  description: 'Exact workflow name filter.',
  schema: { type: 'string' },
};
const runIdParam: ApiParameter = {
  name: 'run_id',
  in: 'path',
  required: true,
  description: 'Run id.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$' },
};

const runFileParam: ApiParameter = {
  name: 'filename',
  in: 'path',
  required: true,
  description: 'Run file name (…json) or run id.',
  schema: { type: 'string' },
};

const datasetSourceQuery: ApiParameter = {
  name: 'dataset_source',
  in: 'query',
  required: true,
  description: 'repository or local.',
  schema: { type: 'string', enum: ['repository', 'local'] },
};
const datasetIdQuery: ApiParameter = {
  name: 'dataset_id',
  in: 'query',
  required: true,
  description: 'Dataset id (file stem).',
  schema: { type: 'string' },
};
const sampleIndexQuery: ApiParameter = {
  name: 'sample_index',
  in: 'query',
  description: 'Zero-based sample index.',
  schema: { type: 'integer', minimum: 0, default: 0 },
};
const pageParams: ApiParameter[] = [
  {
    name: 'offset',
    in: 'query',
    description: 'First sample of the page.',
    schema: { type: 'integer', minimum: 0, default: 0 },
  },
  {
    name: 'limit',
    in: 'query',
    description: 'Samples per page.',
    schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
];
const datasetPathParams: ApiParameter[] = [
  {
    name: 'source',
    in: 'path',
    required: true,
    description: 'repository or local.',
    schema: { type: 'string', enum: ['repository', 'local'] },
  },
  {
    name: 'dataset_id',
    in: 'path',
    required: true,
    description: 'Dataset id (file stem).',
    schema: { type: 'string' },
  },
];
const previewWorkflowQuery: ApiParameter = {
  name: 'workflow',
  in: 'query',
  description: "Also map the sample onto this workflow's inputs (workflow_preview).",
  schema: { type: 'string' },
};
const datasetErrors = {
  '404': err('Unknown dataset or workflow (also: an unsafe dataset id)'),
  '422': invalid,
};

/** Evaluation datasets (spec endpoints 19–24). */
const DATASET_OPERATIONS: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/eval/runs',
    description:
      '`{workflow, dataset_source, dataset_id, sample_indices` or `limit, rubric_id?, concurrency?, adapter?}` → the batch at once (Batch evaluation)',
    operationId: 'startEvalBatch',
    summary:
      'Batch evaluation: runs the workflow over dataset samples (sample_indices or the first limit) with a concurrency limit, each sample an evaluated run in history; answers at once',
    tag: 'evaluation',
    requestSchema: 'EvalBatchRequest',
    responses: {
      '200': { description: 'The batch, just started', schema: 'EvalBatchResponse' },
      '404': err('Unknown workflow or dataset'),
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/eval/runs/{batch_id}',
    description:
      'the batch: progress, items (`run_id`, `status`, `overall_score`, `grade`, `passed`) and `aggregate {scored, mean_score, pass_rate, grade_distribution, failures}`; 404 unknown',
    operationId: 'getEvalBatch',
    summary: "A batch evaluation's progress, items and aggregate",
    tag: 'evaluation',
    parameters: [
      {
        name: 'batch_id',
        in: 'path',
        required: true,
        description: 'Batch id (batch-…).',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': { description: 'The batch', schema: 'EvalBatchResponse' },
      '404': err('Unknown batch (batches are kept in memory: the most recent 100)'),
    },
  },
  {
    method: 'get',
    path: '/api/runs/{filename}/evaluation',
    description:
      '`{run_id, filename, workflow_name, evaluation_requested, evaluation_status, dataset, evaluation}` (Evaluation); `evaluation: null` when not evaluated (`not_requested`), still scored (`pending`) or scoring failed (`failed`, with `error`)',
    operationId: 'getRunEvaluation',
    summary:
      "A run's evaluation (criteria, score layers, hard gates, floor violations); evaluation null when not evaluated",
    tag: 'evaluation',
    parameters: [runFileParam],
    responses: {
      '200': { description: 'Evaluation', schema: 'RunEvaluationDetailResponse' },
      '404': err('Unknown run or rejected path'),
    },
  },
  {
    method: 'get',
    path: '/api/eval/datasets',
    description:
      '`{repository, local, eval_sets}`; `workflow` keeps the datasets compatible with it (404 unknown workflow); see Datasets',
    operationId: 'listEvaluationDatasets',
    summary: 'Evaluation datasets (repository, local) and eval sets',
    tag: 'evaluation',
    parameters: [
      {
        name: 'workflow',
        in: 'query',
        description: 'Keep only the datasets compatible with this workflow.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': { description: 'Datasets', schema: 'ListEvaluationDatasetsResponse' },
      '404': err('Unknown workflow'),
    },
  },
  {
    method: 'get',
    path: '/api/eval/datasets/sample-list',
    description:
      'Deprecated query form of `GET /api/eval/datasets/{source}/{dataset_id}/samples?offset=&limit=`: the same answer, with `Deprecation: true`',
    operationId: 'listDatasetSamplesDeprecated',
    summary:
      'Deprecated: a page of sample summaries (use /api/eval/datasets/{source}/{dataset_id}/samples)',
    tag: 'evaluation',
    deprecated: true,
    parameters: [datasetSourceQuery, datasetIdQuery, ...pageParams],
    responses: {
      '200': { description: 'Samples', schema: 'DatasetSampleListResponse' },
      ...datasetErrors,
    },
  },
  {
    method: 'get',
    path: '/api/eval/datasets/sample-detail',
    description:
      'Deprecated query form of `GET /api/eval/datasets/{source}/{dataset_id}/samples/{sample_index}?workflow=`: the same answer, with `Deprecation: true`',
    operationId: 'getDatasetSampleDeprecated',
    summary:
      'Deprecated: one sample (use /api/eval/datasets/{source}/{dataset_id}/samples/{sample_index})',
    tag: 'evaluation',
    deprecated: true,
    parameters: [datasetSourceQuery, datasetIdQuery, sampleIndexQuery, previewWorkflowQuery],
    responses: {
      '200': { description: 'Sample', schema: 'DatasetSampleDetailResponse' },
      ...datasetErrors,
    },
  },
  {
    method: 'get',
    path: '/api/eval/datasets/{source}/{dataset_id}/samples',
    description:
      '`?offset=&limit=` → `{dataset_source, dataset_id, sample_count, offset, limit, samples: [{sample_index, sample_id, task_id, title, summary, field_names}]}` (`limit` 1–500, default 50); the deprecated query form `sample-list` answers the same with `Deprecation: true`',
    operationId: 'listDatasetSamples',
    summary: 'A page of sample summaries',
    tag: 'evaluation',
    parameters: [...datasetPathParams, ...pageParams],
    responses: {
      '200': { description: 'Samples', schema: 'DatasetSampleListResponse' },
      ...datasetErrors,
    },
  },
  {
    method: 'get',
    path: '/api/eval/datasets/{source}/{dataset_id}/samples/{sample_index}',
    description:
      '`?workflow=` → `{dataset_source, dataset_id, sample_index, sample_id, task_id, title, field_names, summary, sample, dataset_meta, workflow_preview?}`; the deprecated query form `sample-detail` answers the same with `Deprecation: true`',
    operationId: 'getDatasetSample',
    summary: 'One sample with every field',
    tag: 'evaluation',
    parameters: [
      ...datasetPathParams,
      {
        name: 'sample_index',
        in: 'path',
        required: true,
        description: 'Zero-based sample index.',
        schema: { type: 'integer', minimum: 0 },
      },
      previewWorkflowQuery,
    ],
    responses: {
      '200': { description: 'Sample', schema: 'DatasetSampleDetailResponse' },
      ...datasetErrors,
    },
  },
  {
    method: 'get',
    path: '/api/workflows/{workflow_name}/preview-dataset-inputs',
    description:
      '`/api/workflows/{name}/preview-dataset-inputs?dataset_source=&dataset_id=&sample_index=` → `{workflow, dataset_source, dataset_id, sample_index, compatible, adapted_inputs, missing_inputs, input_errors}`; writes nothing (see Datasets)',
    operationId: 'previewDatasetInputs',
    summary:
      "A dataset sample mapped onto the workflow's inputs, with what POST /api/run would refuse in them (writes nothing)",
    tag: 'evaluation',
    parameters: [
      {
        name: 'workflow_name',
        in: 'path',
        required: true,
        description: 'Workflow name (file stem).',
        schema: { type: 'string' },
      },
      datasetSourceQuery,
      datasetIdQuery,
      sampleIndexQuery,
    ],
    responses: {
      '200': { description: 'Mapped inputs', schema: 'PreviewDatasetInputsResponse' },
      ...datasetErrors,
    },
  },
];

export const API_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'get',
    path: '/api/health',
    description: '`{status: "ok", version}` (public liveness probe)',
    operationId: 'getHealth',
    summary: 'Liveness probe',
    tag: 'health',
    public: true,
    responses: { '200': { description: 'Alive', schema: 'HealthResponse' } },
  },
  {
    method: 'get',
    path: '/api/health/ready',
    description:
      '`{status: "ready", checks: {runs_dir, runs_dir_space, runs_dir_write, run_writes, run_history, active_runs, workflows_dir, replay_store}}`; 503 `{detail, checks}` with `Retry-After` naming each failing check (see Durable run files)',
    operationId: 'getReadiness',
    summary: 'Readiness probe: runs dir writable, workflows dir readable, replay store',
    tag: 'health',
    responses: {
      '200': { description: 'Ready', schema: 'ReadinessResponse' },
      '503': err('A check failed; detail names it'),
    },
  },
  {
    method: 'get',
    path: '/api/models/probe',
    description:
      '`{available_providers, unavailable_providers, unavailable_reasons: {provider: why}, tier_defaults: {"1": "provider:model", …}, models: {provider: [ids]}, skipped_models: {"1": [{model, reason: "not listed by openai"}]}}`: every configured provider asked for its model list in parallel (`AGENTIC_LLM_PROBE_TIMEOUT_MS`, 2 s), no tokens spent; see LLM providers',
    operationId: 'probeModels',
    summary:
      'Asks every configured LLM provider for its model list, in parallel with a short timeout (no tokens spent)',
    tag: 'models',
    responses: { '200': { description: 'Probe result', schema: 'ModelProbeResponse' } },
  },
  {
    method: 'get',
    path: '/api/models/tiers',
    description:
      '`{tiers: [{tier: "1", models: [{model, provider, circuit: closed|open|half_open, retry_in_ms}]}], providers: [{provider, circuit}]}`: tiers 1–5 with their fallback chains in the order a request tries them, each model\'s circuit breaker and each provider\'s connection circuit, as this process routes (no provider asked, no tokens spent); see LLM providers',
    operationId: 'modelTiers',
    summary: "The tier chains with each model's circuit breaker state (no provider asked)",
    tag: 'models',
    responses: { '200': { description: 'Tier chains', schema: 'ModelTiersResponse' } },
  },
  {
    method: 'post',
    path: '/api/chat',
    description:
      'body `{messages: [{role: system|user|assistant, content}], temperature?: 0-2, model?: "provider:model", tier?: 1-5}` (exactly one of `model`, `tier`; else 422, as for an empty `messages`, an unknown role or a temperature out of range) → `text/event-stream` of `data: {type: "route", requested_tier, model}` (tier requests, each model tried), `{type: "token", delta}` per chunk, then `{type: "done", model, usage: {input, output, total}, finish_reason}` or one terminal `{type: "error", error, kind}` (HTTP 200 all the same); a client that disconnects aborts the upstream request',
    operationId: 'chat',
    summary:
      'Streamed chat completion over SSE: route (tier requests), token per chunk, done or one terminal error frame',
    tag: 'models',
    requestSchema: 'ChatRequest',
    responses: {
      '200': {
        description: 'Event stream; each data line is a ChatStreamFrame',
        schema: 'ChatStreamFrame',
        contentType: 'text/event-stream',
      },
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/agents',
    description:
      '`{agents: [{name, description, tier, role}]}`: every agent a step may name: the tier-0 agents (`tier: "0"`, `name` the full agent name), the custom agents of `AGENTIC_AGENTS_MODULE`, then the LLM roles of the catalogue (the package\'s `agents/catalogue.yaml` + `AGENTIC_EXTERNAL_AGENTS_DIR`), re-read per request; `tier` is a string',
    operationId: 'listAgents',
    summary: 'List agents (catalogue re-read per request)',
    tag: 'catalogue',
    responses: { '200': { description: 'Agents', schema: 'AgentsResponse' } },
  },
  {
    method: 'get',
    path: '/api/tools',
    description:
      "`{tools: [{name, source, server?, description, risk, parameters}], servers: [{name, transport, state, error?, tools}]}`: the built-in tools, then each MCP server's (`AGENTIC_MCP_CONFIG`) as `mcp:<server>:<tool>` with its JSON Schema; servers not yet connected are connected by this request (each within its connect time limit); a server that cannot be reached is `down` with its `error` and lists no tools. 503 on an instance that runs no steps",
    operationId: 'listTools',
    summary: "List tools (built-in and MCP servers')",
    tag: 'catalogue',
    responses: {
      '200': { description: 'Tools and MCP servers', schema: 'ToolsResponse' },
      '503': err('This instance runs no steps'),
    },
  },
  {
    method: 'get',
    path: '/api/workflows',
    description: '`{workflows: [name, ...]}` (file stems, sorted)',
    operationId: 'listWorkflows',
    summary: 'List workflows',
    tag: 'catalogue',
    responses: { '200': { description: 'Workflow names', schema: 'WorkflowsResponse' } },
  },
  {
    method: 'get',
    path: '/api/adapters',
    description: '`{adapters: ["native", "graph"]}`',
    operationId: 'listAdapters',
    summary: 'List adapters',
    tag: 'catalogue',
    responses: { '200': { description: 'Adapter names', schema: 'AdaptersResponse' } },
  },
  {
    method: 'get',
    path: '/api/workflows/{name}/dag',
    description:
      '`{name, description, nodes: [{id, agent, description, depends_on, tier}], edges: [{source, target}], inputs: [{name, type, description, default, required, enum}]}`; `tier` is a string (`"0"`–`"5"`) as everywhere: in events and run-file steps too; 404 unknown, 422 invalid file',
    operationId: 'getWorkflowDag',
    summary: 'DAG topology and input schema',
    tag: 'workflows',
    parameters: [nameParam],
    responses: {
      '200': { description: 'DAG', schema: 'DagResponse' },
      '404': err('Unknown workflow'),
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/workflows/{name}/capabilities',
    description:
      '`{workflow, capabilities: {inputs: {k: {type, description?}}, outputs: {k: {type: "any", optional?}}}}`',
    operationId: 'getWorkflowCapabilities',
    summary: 'Declared inputs and outputs',
    tag: 'workflows',
    parameters: [nameParam],
    responses: {
      '200': { description: 'Capabilities', schema: 'CapabilitiesResponse' },
      '404': err('Unknown workflow'),
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/workflows/{name}/machine',
    description:
      'the compiled graph state machine as XState JSON (for visualizers): a region per step; a sub-workflow step invokes its child run (`child:<step>`), a map step names its counter (`context.items.<step>`); 501 when the graph adapter is unavailable',
    operationId: 'getWorkflowMachine',
    summary: 'The compiled graph machine definition (XState JSON)',
    tag: 'workflows',
    parameters: [nameParam],
    responses: {
      '200': { description: 'Machine definition', schema: 'MachineResponse' },
      '404': err('Unknown workflow'),
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/workflows/{name}/editor',
    description:
      '`{name, path, yaml_text, document, step_count}`; `path` is relative to the workflows directory (`code_review.yaml`), never absolute; 404 missing, 422 invalid',
    operationId: 'getWorkflowEditor',
    summary: 'Workflow document for editing',
    tag: 'workflows',
    parameters: [nameParam],
    responses: {
      '200': { description: 'Document', schema: 'WorkflowEditorResponse' },
      '404': err('Unknown workflow'),
      '422': invalid,
    },
  },
  {
    method: 'put',
    path: '/api/workflows/{name}',
    description:
      "body: exactly one of `{document}`, `{yaml_text}`, `{source}` (alias of `yaml_text`), optional `name`. Validates fully (schema, dependencies, cycles, expressions, name = `{name}`), then writes atomically; YAML text is stored verbatim, comments included; a `document` is serialized to YAML. `{name}` may carry `.yaml`/`.yml` (`x.yaml` is stored as `x.yaml`); any valid name works, `agents` included. 200: the editor shape; 422 list; 503 when the directory is not writable, or is the package's shipped (read-only) one: the detail says to set `AGENTIC_WORKFLOWS_DIR` or create `./workflows`",
    operationId: 'saveWorkflow',
    summary: 'Validate and save a workflow (atomic write, YAML text kept as sent)',
    tag: 'workflows',
    parameters: [nameParam],
    requestSchema: 'WorkflowEditorRequest',
    responses: {
      '200': { description: 'Saved', schema: 'WorkflowEditorResponse' },
      '422': invalid,
      '503': err('Workflows directory not writable'),
    },
  },
  {
    method: 'post',
    path: '/api/workflows/validate',
    description:
      'same body; 200 `{valid: true, name, step_count, yaml_text}` or 422 list; writes nothing',
    operationId: 'validateWorkflow',
    summary: 'Validate a workflow without saving',
    tag: 'workflows',
    requestSchema: 'WorkflowEditorRequest',
    responses: {
      '200': { description: 'Valid', schema: 'WorkflowValidationResponse' },
      '422': invalid,
    },
  },
  {
    method: 'post',
    path: '/api/run',
    description:
      'body `{workflow, input_data?, run_id?, adapter?, evaluation?, execution_profile?, budget?}` → 200 `{run_id, status: "pending"}` at once. `workflow`: a name or a `.yaml` path inside the workflows directory. `run_id`: 1–128 of `A-Z a-z 0-9 _ -` (generated when absent, see Run ids). `adapter`: `graph` or `native`, default `AGENTIC_DEFAULT_ADAPTER`. `execution_profile`: `runtime` (`subprocess`|`docker`), `max_attempts` (≥ 1, attempts per step), `max_duration_minutes` (≥ 1, run timeout), `container_image` — recorded in the run file under `extra.execution_profile`. `budget` (additive): `{max_cost_usd?, max_tokens?, on_exceeded?: "pause"|"fail", step_down_at?}`, the stricter of it and the workflow\'s `budget:` wins per dimension, recorded under `extra.budget` with what the run spent (Budgets, docs/budgets.md). `evaluation`: recorded under `extra.evaluation`; `dataset_source` is `repository`, `local` or `none` (the Python service\'s default: no dataset); `enabled: true` scores the run (Evaluation); 404: unknown dataset. 422: body, unknown workflow or adapter, invalid inputs (all problems at once); 409: the `run_id` is active or names a run already in the history (ids are unique: reusing one would hide the older run from id lookups); 400: blocked by sanitization; 429: active-run limit',
    operationId: 'startRun',
    summary:
      'Start a run (answers at once; the run continues in the background). With evaluation.enabled the dataset sample is mapped onto the inputs (request inputs win) and the run is scored after it ends (evaluation_start, evaluation_complete)',
    tag: 'runs',
    requestSchema: 'WorkflowRunRequest',
    responses: {
      '200': { description: 'Accepted', schema: 'WorkflowRunResponse' },
      '400': err('Blocked by sanitization or malformed body'),
      '404': err('Unknown evaluation dataset'),
      '409': err('A run with this run_id is active'),
      '422': invalid,
      '429': err(
        'AGENTIC_MAX_ACTIVE_RUNS runs are active (Retry-After), or the rate limit or auth lockout applies',
      ),
      '501': err('Adapter unavailable'),
      '503': err(
        'Run files cannot be written (Retry-After), the active runs hold AGENTIC_MAX_RUNS_HELD_BYTES (Retry-After, code runs_budget_spent), or the service is shutting down',
      ),
    },
  },
  {
    method: 'post',
    path: '/api/runs/{run_id}/cancel',
    description:
      '200 `{run_id, status: "cancelling"}` (the run ends `failed`, error `cancelled`); 404 unknown; 409 already finished',
    operationId: 'cancelRun',
    summary: 'Cancel an active run',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '200': { description: 'Cancelling', schema: 'CancelRunResponse' },
      '404': err('Unknown run'),
      '409': err('Run already finished'),
    },
  },
  {
    method: 'post',
    path: '/api/runs/{run_id}/rerun',
    description:
      'body `{from_step, inputs?}` → 200 `{run_id, status: "pending"}` at once, like `POST /api/run`: a new run (new id) of the run\'s workflow that reuses the recorded outcomes of the steps upstream of `from_step` (no model called for them) and executes `from_step` and every step downstream of it; its run file has `extra.forked_from: {run_id, step}` (Rerun from a step, docs/rerun.md). `inputs` replace the source run\'s values key by key, checked like a run\'s inputs. 404 unknown run; 409 the run is still running, or its workflow is gone or no longer has the step; 422 body, no such step in the run (`loc` `["body", "from_step"]`), invalid inputs. On an api instance (Redis) the api instance checks it alike and queues the fork; a worker runs it, reading the run\'s file from the shared runs directory',
    operationId: 'rerunRun',
    summary: 'Rerun a finished run from one of its steps (a fork)',
    tag: 'runs',
    parameters: [runIdParam],
    requestSchema: 'WorkflowRerunRequest',
    responses: {
      '200': { description: 'Accepted', schema: 'WorkflowRunResponse' },
      '404': err('Unknown run'),
      '409': err('The run is still running, or its workflow is gone or no longer has the step'),
      '422': invalid,
      '429': err('AGENTIC_MAX_ACTIVE_RUNS runs are active (Retry-After)'),
      '503': err(
        'Run files cannot be written, the run queue (Redis) does not answer (Retry-After), or the service is shutting down',
      ),
    },
  },
  {
    method: 'post',
    path: '/api/runs/{run_id}/resume',
    description:
      '200 `{run_id, status: "running"}`: an interrupted run (its process stopped; left `failed`, error `interrupted`, by `AGENTIC_RESUME=manual` or `off`) goes on in this process, same run id and file, with the workflow it started with; its finished steps are not run again, its interrupted step is retried (Durable runs); on an api instance (Redis) the run is claimed again and its resume queued to a worker (200 once queued; Scale-out, When a worker dies); 404 unknown; 409 not interrupted (ended otherwise, active, its process alive); 422 its workflow is gone or no longer matches its file',
    operationId: 'resumeRun',
    summary: 'Resume an interrupted run',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '200': { description: 'Running again', schema: 'ResumeRunResponse' },
      '404': err('Unknown run'),
      '409': err('Run not interrupted'),
      '422': err('Its workflow is gone or no longer matches its run file'),
      '501': err('Runs execute elsewhere (an api instance)'),
      '503': err('Run files cannot be written, or the service is shutting down'),
    },
  },
  {
    method: 'get',
    path: '/api/approvals',
    description:
      '`{provider, approvals: [{call_id, run_id, workflow, step, tool_name, requested_at, expires_at?, arguments?, kind?, prompt?, schema?}]}`: requests waiting for a person, oldest first: tool calls (only with `AGENTIC_APPROVAL_PROVIDER=http`; Approval) and human steps\' questions (`kind: "input"`, `tool_name: "human"`, with `prompt` and `schema`; `expires_at` only with a timeout; whatever the provider) and runs paused at their budget (`kind: "budget"`, `tool_name: "budget"`, `step` whose model call waits, `spent: {tokens, cost_usd}` and the `budget` reached; docs/budgets.md)',
    operationId: 'listApprovals',
    summary: "Tool calls waiting for approval and human steps' questions",
    tag: 'approvals',
    responses: { '200': { description: 'Pending calls', schema: 'ApprovalsResponse' } },
  },
  {
    method: 'post',
    path: '/api/approvals/{call_id}',
    description:
      'body `{decision: "approve" | "deny", reason?}` (a tool call) or `{answer: {...}}` (a human step\'s question: the answer must match its schema and becomes the step\'s outputs) or `{budget: {max_tokens?, max_cost_usd?}}` (a run paused at its budget: each limit given above what it has spent; the run goes on at once; `{decision: "deny"}` stops it with `budget_exceeded`) → 200 `{call_id, decision, answer?, budget?}`; 404 nothing waits with this id; 409 already answered, timed out or cancelled; 422 bad body, an answer that does not match the schema (`detail` names what is wrong), a budget not above what is spent, or the wrong kind of answer (a decision for a question, an answer for a tool call, anything but a budget or a deny for a paused run)',
    operationId: 'decideApproval',
    summary:
      "Approve or deny a tool call waiting for approval, answer a human step's question, or raise a paused run's budget",
    tag: 'approvals',
    parameters: [
      {
        name: 'call_id',
        in: 'path',
        required: true,
        description: 'The call_id of the approval_required event or GET /api/approvals.',
        schema: { type: 'string' },
      },
    ],
    requestSchema: 'ApprovalDecisionRequest',
    responses: {
      '200': { description: 'Decided', schema: 'ApprovalDecisionResponse' },
      '404': err('Nothing waits with this id'),
      '409': err('Already answered, timed out or cancelled'),
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/runs',
    description:
      'bare array of run summaries `{filename, run_id, workflow_name, status, success_rate, total_duration_ms, step_count, failed_step_count, start_time, end_time, evaluation_score, evaluation_grade}`, newest first; `limit` 1–1000 (default 50, otherwise 422); `workflow` is an exact match; `status` one of `pending`, `running`, `success`, `failed`; `since`/`until` ISO 8601 date-times bounding `start_time` (inclusive); 422 for any other value',
    operationId: 'listRuns',
    summary: 'Run summaries, newest first',
    tag: 'runs',
    parameters: [
      workflowQuery,
      {
        name: 'limit',
        in: 'query',
        description: 'Most entries returned.',
        schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
      },
      {
        name: 'status',
        in: 'query',
        description: 'Only runs with this status.',
        schema: { type: 'string', enum: ['pending', 'running', 'success', 'failed'] },
      },
      {
        name: 'since',
        in: 'query',
        description: 'Only runs started at or after this ISO 8601 date-time.',
        schema: { type: 'string', format: 'date-time' },
      },
      {
        name: 'until',
        in: 'query',
        description: 'Only runs started at or before this ISO 8601 date-time.',
        schema: { type: 'string', format: 'date-time' },
      },
    ],
    responses: {
      '200': { description: 'Summaries', schema: 'RunListResponse' },
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/runs/summary',
    description:
      '`{total_runs, success, failed, avg_duration_ms, workflows, tokens_30d, cost_30d, cost_30d_unpriced_runs}` (running runs count in `total_runs`; the average is over finished runs, 0 when none; tokens of runs started in the last 30 days, by UTC day; `cost_30d` the USD of those whose cost is known, `cost_30d_unpriced_runs` the number of those whose cost is not: a model without a price, docs/llm.md "Prices and cost")',
    operationId: 'getRunsSummary',
    summary: 'Aggregate run statistics',
    tag: 'runs',
    parameters: [workflowQuery],
    responses: { '200': { description: 'Statistics', schema: 'RunsSummaryResponse' } },
  },
  {
    method: 'get',
    path: '/api/runs/{filename}',
    description:
      'the run file (by file name or run id; numeric step tiers of files written by earlier versions are served as strings); 404 when unknown or when the name is not a plain run-file name or run id in NFKC form (`..`, separators, percent-encoding, NUL, look-alike characters are rejected before any lookup)',
    operationId: 'getRun',
    summary: 'Full run record, by run file name or run id',
    tag: 'runs',
    parameters: [runFileParam],
    responses: {
      '200': { description: 'Run record', schema: 'RunRecord' },
      '404': err('Unknown run or rejected path'),
    },
  },
  {
    method: 'get',
    path: '/api/runs/{run_id}/explain',
    description:
      '`{run_id, workflow, status, reason, message, source, steps: [{step, status, waits: [{reason, message, …}]}]}`: for each step that has not finished, what it waits for (`dependencies` with their states, `condition_false` with the `when:` and the values it saw, `approval` since when and how to answer, `budget` a run paused at its budget (run `reason` `awaiting_budget`, step `awaiting_budget`), `retry_backoff` with the time left, `circuit_open` on its tier, `concurrency_limit`, `running`), each as a reason code and a sentence; a queued run its place in the worker queue (`queue`), a run on another worker that worker; an ended run its end (`failed_step`, `error`) from its run file; 404 `{detail}` when unknown (docs/explain.md)',
    operationId: 'explainRun',
    summary: 'Why a run is not moving: what each unfinished step waits for',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '200': { description: 'Explanation', schema: 'RunExplanationResponse' },
      '404': err('Unknown run'),
      '503': err('The run history is still loading after start-up (Retry-After)'),
    },
  },
  {
    method: 'get',
    path: '/api/runs/{run_id}/stream',
    description:
      '`text/event-stream`: `data: <event JSON>` frames, buffered events first then live, keepalive frames every 15 s; closes after `workflow_end` (or `evaluation_complete`), after 30 s without events, or at once after the replay for a finished run',
    operationId: 'streamRunEvents',
    summary: 'Server-sent events of a run: replay, then live (data: <WorkflowEvent JSON>)',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '200': {
        description: 'Event stream; each data line is a WorkflowEvent or a keepalive frame',
        schema: 'WorkflowEvent',
        contentType: 'text/event-stream',
      },
      '404': err('Unknown run'),
    },
  },
  {
    method: 'get',
    path: '/ws/execution/{run_id}',
    description:
      'replay (≤ 500 events, or rebuilt from the run file) then live events, one JSON text frame each; stays open after the run until the client leaves (pings every 30 s; no pong, terminated); a run not started yet is waited for and streamed from its first event (≤ 10 such sockets per client IP, more close 1013); the key in `Authorization`/`X-API-Key`, or from a browser as the subprotocols `agentic.v1` and `agentic.bearer.<base64url key>` (the server answers `agentic.v1`; see The key from a browser); close 1008 for a disallowed Origin, a key in the query string, a missing or invalid key; 4404 for an invalid run id; 1009 for a client message over 4 KiB; the upgrade counts against the rate limit (429 before the handshake). See Live events',
    operationId: 'runEventsWebSocket',
    summary:
      'WebSocket upgrade (counted against the rate limit: 429 with Retry-After before the handshake): replay of up to 500 buffered events (or rebuilt from the run file), then live; each text frame is a WorkflowEvent. A run not started yet is waited for and streamed from its first event. The socket stays open after the run until the client leaves; the server pings every AGENTIC_WS_PING_INTERVAL_SECONDS and terminates a client that misses a pong. The key goes in a header, or (browsers) as the subprotocol agentic.bearer.<base64url key> beside agentic.v1. Close 1008: origin not allowed, key in the query string, missing or invalid key; 1009: client message over 4096 bytes; 1013: too many sockets of this client waiting for runs not started; 4404: invalid run id; 1001: shutdown',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '101': { description: 'Switching protocols', schema: 'WorkflowEvent' },
    },
  },
  {
    method: 'post',
    path: '/mcp',
    description:
      'MCP over Streamable HTTP (JSON-RPC 2.0; answered by the official SDK, `@modelcontextprotocol/server`): every workflow is a tool; `tools/call` starts a run as `POST /api/run` does (same sanitization, validation, rate limit, run file) and answers its outputs. 2026-07-28 clients stateless, 2025-era clients with an `Mcp-Session-Id` session. Malformed messages get JSON-RPC errors. See docs/mcp.md',
    operationId: 'mcp',
    summary:
      'MCP server endpoint (Streamable HTTP): the workflows as tools, with progress notifications and cancellation',
    tag: 'runs',
    responses: {
      '200': {
        description: 'A JSON-RPC response, or an SSE stream of notifications then the response',
        contentType: 'text/event-stream',
      },
      '202': { description: 'A notification or response accepted' },
      '401': err('Missing or invalid API key'),
      '404': { description: 'Unknown MCP session (the client initializes again)' },
      '429': err('The rate limit or auth lockout applies'),
    },
  },
  {
    method: 'get',
    path: '/mcp',
    description:
      "a 2025-era session's stream of server notifications (`notifications/tools/list_changed`), with `Mcp-Session-Id`; 405 without a session. See docs/mcp.md",
    operationId: 'mcpStream',
    summary: 'MCP session stream (Streamable HTTP, server-to-client notifications)',
    tag: 'runs',
    responses: {
      '200': {
        description: 'SSE stream of JSON-RPC notifications',
        contentType: 'text/event-stream',
      },
      '401': err('Missing or invalid API key'),
    },
  },
  {
    method: 'get',
    path: '/metrics',
    description:
      'Prometheus text format, only with `AGENTIC_METRICS=1` (else 404); needs the key unless `AGENTIC_METRICS_PUBLIC=1`. See Metrics',
    operationId: 'getMetrics',
    summary:
      'Prometheus metrics in the text exposition format; only when AGENTIC_METRICS=1 (else 404). Needs the API key when one is set, unless AGENTIC_METRICS_PUBLIC=1',
    tag: 'health',
    responses: {
      '200': {
        description: 'Prometheus text format 0.0.4',
        contentType: 'text/plain; version=0.0.4; charset=utf-8',
      },
      '401': err('Missing or invalid API key'),
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    description:
      'The OpenAPI 3.1 document, generated from `schemas/` by `npm run gen`; always served, public',
    operationId: 'getOpenApi',
    summary: 'This document',
    tag: 'docs',
    public: true,
    responses: { '200': { description: 'OpenAPI 3.1 document' } },
  },
  {
    method: 'get',
    path: '/docs',
    description:
      'Swagger UI, served from the local `swagger-ui-dist` package (no CDN), public; 503 with a `detail` naming the package when it is not installed (an optional dependency)',
    operationId: 'getSwaggerUi',
    summary: 'Interactive explorer (Swagger UI, served locally)',
    tag: 'docs',
    public: true,
    responses: { '200': { description: 'HTML page', contentType: 'text/html' } },
  },
  {
    method: 'get',
    path: '/redoc',
    description:
      'ReDoc, served from the local `redoc` package (no CDN), public; 503 with a `detail` naming the package when it is not installed (an optional dependency)',
    operationId: 'getRedoc',
    summary: 'Reference viewer (Redoc, served locally)',
    tag: 'docs',
    public: true,
    responses: { '200': { description: 'HTML page', contentType: 'text/html' } },
  },
  ...DATASET_OPERATIONS,
];
