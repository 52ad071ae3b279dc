import type { CompiledWorkflow } from '../workflow/types.js';

const cache = new WeakMap<CompiledWorkflow, ReadonlyMap<string, readonly string[]>>();
const REFERENCE = /steps\.([A-Za-z0-9_.-]+?)\.outputs\.([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Output keys each step is expected to produce: the keys of its `outputs` mapping plus every
 * `steps.<step>.outputs.<key>` referenced anywhere in the workflow (later steps' inputs,
 * conditions, the workflow outputs). The no-LLM client fills exactly these, so placeholder runs
 * produce non-null declared outputs. Computed once per compiled workflow.
 */
export function expectedOutputKeys(
  workflow: CompiledWorkflow,
): ReadonlyMap<string, readonly string[]> {
  const cached = cache.get(workflow);
  if (cached !== undefined) return cached;
  const keys = new Map<string, Set<string>>();
  for (const step of workflow.steps) keys.set(step.name, new Set(Object.keys(step.outputs)));
  const text = JSON.stringify(workflow.document);
  for (const match of text.matchAll(REFERENCE)) {
    const [, stepName, key] = match;
    if (stepName === undefined || key === undefined) continue;
    keys.get(stepName)?.add(key);
  }
  const result = new Map<string, readonly string[]>();
  for (const [name, set] of keys) result.set(name, [...set]);
  cache.set(workflow, result);
  return result;
}
