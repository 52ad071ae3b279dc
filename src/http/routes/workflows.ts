/**
 * Workflow endpoints: DAG, capabilities, compiled graph machine, editor read, save, validate
 * (spec endpoints 8–12 and ours, `GET /api/workflows/{name}/machine`).
 */
import type Router from '@koa/router';
import { stringify } from 'yaml';
import { ERROR_CODES, NotFoundError, ValidationError } from '../../errors.js';
import type { WorkflowEditorResponse } from '../../generated/api/editor-response.js';
import type { WorkflowValidationResponse } from '../../generated/api/validation-response.js';
import {
  isWorkflowName,
  type CompiledWorkflow,
  type LoadedWorkflow,
  type WorkflowRegistry,
  workflowNameOf,
} from '../../workflow/index.js';
import { param, requestBody } from '../context.js';
import { parseEditorRequest } from '../request-validation.js';
import { toCapabilities, toDag } from '../workflow-views.js';

export interface WorkflowRouteDeps {
  registry: Pick<WorkflowRegistry, 'get' | 'save' | 'compile' | 'parse' | 'checkCalls'>;
  /** The compiled graph machine's JSON definition (brief C's `graphMachineDefinition`). */
  machineDefinition: (workflow: CompiledWorkflow) => unknown;
}

function checkedName(name: string): string {
  if (!isWorkflowName(name)) {
    throw new NotFoundError(`Workflow not found: ${name}`, ERROR_CODES.WORKFLOW_NOT_FOUND);
  }
  return name;
}

function editorView(loaded: LoadedWorkflow): WorkflowEditorResponse {
  return {
    name: loaded.name,
    // Relative to the workflows directory: an absolute path would disclose the server's layout.
    path: loaded.file,
    yaml_text: loaded.yamlText,
    document: loaded.document as Record<string, unknown>,
    step_count: loaded.compiled.steps.length,
  };
}

/** The submitted workflow as YAML text: `yaml_text`/`source` kept verbatim, a `document` serialized. */
function submittedYaml(body: unknown): { text: string; field: string; name: string | undefined } {
  const request = parseEditorRequest(body);
  if (request.document !== undefined) {
    return { text: stringify(request.document), field: 'document', name: request.name };
  }
  if (request.yaml_text !== undefined) {
    return { text: request.yaml_text, field: 'yaml_text', name: request.name };
  }
  return { text: request.source ?? '', field: 'source', name: request.name };
}

export function registerWorkflowRoutes(router: Router, deps: WorkflowRouteDeps): void {
  const load = (name: string) => deps.registry.get(checkedName(name));

  router.get('/api/workflows/:name/dag', async (ctx) => {
    ctx.body = toDag((await load(param(ctx, 'name'))).compiled);
  });
  router.get('/api/workflows/:name/capabilities', async (ctx) => {
    ctx.body = toCapabilities((await load(param(ctx, 'name'))).compiled);
  });
  router.get('/api/workflows/:name/machine', async (ctx) => {
    ctx.body = deps.machineDefinition((await load(param(ctx, 'name'))).compiled);
  });
  router.get('/api/workflows/:name/editor', async (ctx) => {
    ctx.body = editorView(await load(param(ctx, 'name')));
  });

  router.post('/api/workflows/validate', async (ctx) => {
    const submitted = submittedYaml(requestBody(ctx));
    const document = deps.registry.parse(submitted.text, submitted.field);
    const compiled = deps.registry.compile(document);
    await deps.registry.checkCalls(compiled);
    if (submitted.name !== undefined && submitted.name !== compiled.name) {
      throw nameMismatch(submitted.name, compiled.name);
    }
    const body: WorkflowValidationResponse = {
      valid: true,
      name: compiled.name,
      step_count: compiled.steps.length,
      yaml_text: submitted.text,
    };
    ctx.body = body;
  });

  router.put('/api/workflows/:name', async (ctx) => {
    // `x.yaml` and `x` name the same workflow, stored as `x.yaml`.
    const name = workflowNameOf(param(ctx, 'name'));
    if (!isWorkflowName(name)) {
      throw new ValidationError('invalid workflow name', [
        {
          loc: ['path', 'name'],
          msg: 'a workflow name is [A-Za-z0-9_.-]+, not starting with "."',
          type: 'value_error',
        },
      ]);
    }
    const submitted = submittedYaml(requestBody(ctx));
    if (submitted.name !== undefined && submitted.name !== name) {
      throw nameMismatch(submitted.name, name);
    }
    // The registry validates fully (name included) before it writes anything.
    ctx.body = editorView(await deps.registry.save(name, submitted.text));
  });
}

function nameMismatch(given: string, expected: string): ValidationError {
  const msg = `name mismatch: the request names "${given}" but the workflow is "${expected}"`;
  return new ValidationError(msg, [
    { loc: ['body', 'name'], msg, type: 'value_error.name_mismatch' },
  ]);
}
