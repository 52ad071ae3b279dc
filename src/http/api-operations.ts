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
    summary: 'Start a run (answers at once; the run continues in the background)',
    tag: 'runs',
    requestSchema: 'WorkflowRunRequest',
    responses: {
      '200': { description: 'Accepted', schema: 'WorkflowRunResponse' },
      '400': err('Blocked by sanitization or malformed body'),
      '409': err('A run with this run_id is active'),
      '422': invalid,
      '501': err('Adapter unavailable'),
      '503': err('Run files cannot be written (Retry-After), or the service is shutting down'),
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
    parameters: [
      {
        name: 'filename',
        in: 'path',
        required: true,
        description: 'Run file name (…json) or run id.',
        schema: { type: 'string' },
      },
    ],
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
      'WebSocket upgrade: replay of up to 500 buffered events, then live; each text frame is a WorkflowEvent. Close 1008: origin not allowed, key in the query string, missing or invalid key',
    tag: 'runs',
    parameters: [runIdParam],
    responses: {
      '101': { description: 'Switching protocols', schema: 'WorkflowEvent' },
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
];
