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
    operationId: 'getHealth',
    summary: 'Liveness probe',
    tag: 'health',
    public: true,
    responses: { '200': { description: 'Alive', schema: 'HealthResponse' } },
  },
  {
    method: 'get',
    path: '/api/health/ready',
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
    operationId: 'probeModels',
    summary:
      'Asks every configured LLM provider for its model list, in parallel with a short timeout (no tokens spent)',
    tag: 'models',
    responses: { '200': { description: 'Probe result', schema: 'ModelProbeResponse' } },
  },
  {
    method: 'post',
    path: '/api/chat',
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
    operationId: 'listAgents',
    summary: 'List agents (catalogue re-read per request)',
    tag: 'catalogue',
    responses: { '200': { description: 'Agents', schema: 'AgentsResponse' } },
  },
  {
    method: 'get',
    path: '/api/workflows',
    operationId: 'listWorkflows',
    summary: 'List workflows',
    tag: 'catalogue',
    responses: { '200': { description: 'Workflow names', schema: 'WorkflowsResponse' } },
  },
  {
    method: 'get',
    path: '/api/adapters',
    operationId: 'listAdapters',
    summary: 'List adapters',
    tag: 'catalogue',
    responses: { '200': { description: 'Adapter names', schema: 'AdaptersResponse' } },
  },
  {
    method: 'get',
    path: '/api/workflows/{name}/dag',
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
    method: 'get',
    path: '/api/approvals',
    operationId: 'listApprovals',
    summary: 'Tool calls waiting for approval (AGENTIC_APPROVAL_PROVIDER=http)',
    tag: 'approvals',
    responses: { '200': { description: 'Pending calls', schema: 'ApprovalsResponse' } },
  },
  {
    method: 'post',
    path: '/api/approvals/{call_id}',
    operationId: 'decideApproval',
    summary: 'Approve or deny a tool call waiting for approval',
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
      '404': err('No call waits with this id'),
      '409': err('Already decided, timed out or cancelled'),
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/runs',
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
    ],
    responses: {
      '200': { description: 'Summaries', schema: 'RunListResponse' },
      '422': invalid,
    },
  },
  {
    method: 'get',
    path: '/api/runs/summary',
    operationId: 'getRunsSummary',
    summary: 'Aggregate run statistics',
    tag: 'runs',
    parameters: [workflowQuery],
    responses: { '200': { description: 'Statistics', schema: 'RunsSummaryResponse' } },
  },
  {
    method: 'get',
    path: '/api/runs/{filename}',
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
    path: '/api/runs/{run_id}/stream',
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
    operationId: 'runEventsWebSocket',
    summary:
      'WebSocket upgrade (counted against the rate limit: 429 with Retry-After before the handshake): replay of up to 500 buffered events (or rebuilt from the run file), then live; each text frame is a WorkflowEvent. A run not started yet is waited for and streamed from its first event. The socket stays open after the run until the client leaves; the server pings every AGENTIC_WS_PING_INTERVAL_SECONDS and terminates a client that misses a pong. Close 1008: origin not allowed, key in the query string, missing or invalid key; 1009: client message over 4096 bytes; 1013: too many sockets of this client waiting for runs not started; 4404: invalid run id; 1001: shutdown',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '101': { description: 'Switching protocols', schema: 'WorkflowEvent' },
    },
  },
  {
    method: 'get',
    path: '/metrics',
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
    operationId: 'getOpenApi',
    summary: 'This document',
    tag: 'docs',
    public: true,
    responses: { '200': { description: 'OpenAPI 3.1 document' } },
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getSwaggerUi',
    summary: 'Interactive explorer (Swagger UI, served locally)',
    tag: 'docs',
    public: true,
    responses: { '200': { description: 'HTML page', contentType: 'text/html' } },
  },
  {
    method: 'get',
    path: '/redoc',
    operationId: 'getRedoc',
    summary: 'Reference viewer (Redoc, served locally)',
    tag: 'docs',
    public: true,
    responses: { '200': { description: 'HTML page', contentType: 'text/html' } },
  },
  ...DATASET_OPERATIONS,
];
