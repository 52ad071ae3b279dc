/**
 * The workflow registry a runtime made, for the HTTP service that serves it: one registry per
 * runtime, so the service's workflow endpoints validate with the runtime's custom agent names and
 * share its cache of compiled workflows. Held under a symbol on the runtime object (not part of
 * the public `Runtime` type, nor of any module-level table).
 */
import type { WorkflowRegistry } from '../workflow/index.js';
import type { Runtime } from './types.js';

const WORKFLOW_REGISTRY = Symbol('agentic-runtime.workflowRegistry');

/** `runtime` with its registry attached, as `createRuntime` returns it. */
export function withWorkflowRegistry<T extends Runtime>(runtime: T, registry: WorkflowRegistry): T {
  Object.defineProperty(runtime, WORKFLOW_REGISTRY, { value: registry, enumerable: false });
  return runtime;
}

/** The registry of a runtime made by `createRuntime`; undefined for any other `Runtime`. */
export function workflowRegistryOf(runtime: Runtime): WorkflowRegistry | undefined {
  return (runtime as Partial<Record<typeof WORKFLOW_REGISTRY, WorkflowRegistry>>)[
    WORKFLOW_REGISTRY
  ];
}
