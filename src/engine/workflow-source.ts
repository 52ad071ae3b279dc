import type { CompiledWorkflow, WorkflowDocument } from '../workflow/types.js';
import { compileWorkflow, parseWorkflowYaml, type WorkflowRegistry } from '../workflow/index.js';

const YAML_FILE = /\.ya?ml$/;
const NAME_OR_PATH = /^[A-Za-z0-9_./-]+$/;

/** Whether a string names a workflow (a name or a relative YAML path) rather than being YAML text. */
export function isWorkflowReference(source: string): boolean {
  return NAME_OR_PATH.test(source) && (YAML_FILE.test(source) || !source.includes('/'));
}

/**
 * Compiles a workflow source: a name or YAML path inside the workflows directory (through the
 * registry, cached until the file changes), YAML text, or a parsed document.
 * @throws NotFoundError for an unknown name; ValidationError for an invalid workflow
 */
export async function loadWorkflowSource(
  source: string | WorkflowDocument,
  registry: WorkflowRegistry,
): Promise<CompiledWorkflow> {
  if (typeof source !== 'string') return compileWorkflow(source);
  if (isWorkflowReference(source)) return (await registry.get(source)).compiled;
  return compileWorkflow(parseWorkflowYaml(source));
}
