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
  cache?: CompiledCache,
): Promise<CompiledWorkflow> {
  if (typeof source === 'string' && isWorkflowReference(source)) {
    return (await registry.get(source)).compiled;
  }
  // Inline sources (YAML text, documents) are compiled once per distinct content: validating a
  // large workflow costs milliseconds, and embedders tend to run the same one many times.
  const key = typeof source === 'string' ? `y:${source}` : `d:${JSON.stringify(source)}`;
  const cached = cache?.get(key);
  if (cached !== undefined) return cached;
  const compiled =
    typeof source === 'string'
      ? compileWorkflow(parseWorkflowYaml(source))
      : compileWorkflow(source);
  cache?.set(key, compiled);
  return compiled;
}

/** Compiled inline workflows by content (a small LRU). */
export class CompiledCache {
  private readonly entries = new Map<string, CompiledWorkflow>();
  constructor(private readonly limit = 32) {}

  get(key: string): CompiledWorkflow | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: CompiledWorkflow): void {
    this.entries.set(key, value);
    if (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }
}
