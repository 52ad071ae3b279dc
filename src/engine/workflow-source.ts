import type { CompiledWorkflow, WorkflowDocument } from '../workflow/types.js';
import type { WorkflowRegistry } from '../workflow/index.js';
import { calledWorkflow } from '../workflow/kinds/workflow-call.js';

const YAML_FILE = /\.ya?ml$/;
const NAME_OR_PATH = /^[A-Za-z0-9_./-]+$/;

/** Whether a string names a workflow (a name or a relative YAML path) rather than being YAML text. */
export function isWorkflowReference(source: string): boolean {
  return NAME_OR_PATH.test(source) && (YAML_FILE.test(source) || !source.includes('/'));
}

/**
 * Compiles a workflow source: a name or YAML path inside the workflows directory (through the
 * registry, cached until the file changes), YAML text, or a parsed document. The checks of its
 * sub-workflow steps against the directory run too, unless `checkCalls` is false (a run's
 * pinned copy at a resume: a child is looked up when its step starts).
 * @throws NotFoundError for an unknown name; ValidationError for an invalid workflow
 */
export async function loadWorkflowSource(
  source: string | WorkflowDocument,
  registry: WorkflowRegistry,
  cache?: CompiledCache,
  checkCalls = true,
): Promise<CompiledWorkflow> {
  if (typeof source === 'string' && isWorkflowReference(source)) {
    return (await registry.get(source)).compiled;
  }
  // Inline sources (YAML text, documents) are compiled once per distinct content: validating a
  // large workflow costs milliseconds, and embedders tend to run the same one many times.
  if (typeof source !== 'string') {
    // The same document object again (the common embedding case): compare it with the JSON copy
    // taken when it was compiled (~3× cheaper than serialising it and hashing the text; a
    // mutated document no longer matches and takes the content path below).
    const known = cache?.byDocument(source);
    if (known !== undefined) return known;
  }
  const json = typeof source === 'string' ? undefined : JSON.stringify(source);
  const key = json === undefined ? `y:${source as string}` : `d:${json}`;
  let compiled = cache?.get(key);
  if (compiled === undefined) {
    compiled =
      typeof source === 'string'
        ? registry.compile(registry.parse(source))
        : registry.compile(source);
    cache?.set(key, compiled);
  }
  if (json !== undefined) cache?.rememberDocument(source as WorkflowDocument, json, compiled);
  // Its sub-workflow steps are checked against the directory every time (children change).
  if (checkCalls && compiled.steps.some((step) => calledWorkflow(step) !== undefined)) {
    await registry.checkCalls(compiled);
  }
  return compiled;
}

/** Compiled inline workflows by content (a small LRU), and by document object. */
export class CompiledCache {
  private readonly entries = new Map<string, CompiledWorkflow>();
  /** Per document object: what it held when compiled (as a {@link Shape}), and the compilation. */
  private readonly documents = new WeakMap<object, { shape: Shape; compiled: CompiledWorkflow }>();
  constructor(private readonly limit = 32) {}

  /** The compilation of `document` if it still holds what it held when it was remembered. */
  byDocument(document: WorkflowDocument): CompiledWorkflow | undefined {
    const known = this.documents.get(document);
    if (known === undefined) return undefined;
    if (sameJson(document, known.shape)) return known.compiled;
    this.documents.delete(document);
    return undefined;
  }

  /** Remembers the compilation of `document`, whose `JSON.stringify` is `json`. */
  rememberDocument(document: WorkflowDocument, json: string, compiled: CompiledWorkflow): void {
    this.documents.set(document, { shape: shapeOf(JSON.parse(json) as unknown), compiled });
  }

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

/**
 * A `JSON.parse` result kept for comparisons: arrays as arrays of shapes, objects as their keys
 * (in order) and values, so a comparison lists no keys of the copy.
 */
type Shape = null | boolean | number | string | Shape[] | ObjectShape;

class ObjectShape {
  constructor(
    readonly keys: readonly string[],
    readonly values: readonly Shape[],
  ) {}
}

function shapeOf(json: unknown): Shape {
  if (Array.isArray(json)) return json.map(shapeOf);
  if (typeof json !== 'object' || json === null) return json as Shape;
  const keys = Object.keys(json);
  return new ObjectShape(
    keys,
    keys.map((key) => shapeOf((json as Record<string, unknown>)[key])),
  );
}

/**
 * Whether `value` equals `shape`, a `JSON.parse` result, key order included: then
 * `JSON.stringify(value)` is the text `shape` was parsed from. Anything JSON would turn into
 * something else (undefined, dates, NaN, holes, objects with other prototypes) compares unequal,
 * which only costs a recompute. Objects are walked with `for…in` (no key array per object; with
 * `Object.prototype` as their prototype, `for…in` lists exactly their own enumerable keys unless
 * the prototype was given enumerable properties, and then they only compare unequal).
 */
function sameJson(value: unknown, shape: Shape): boolean {
  if (typeof shape !== 'object' || shape === null) return value === shape;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(shape)) {
    if (!Array.isArray(value) || value.length !== shape.length) return false;
    for (let i = 0; i < shape.length; i++) {
      if (!sameJson(value[i], shape[i]!)) return false;
    }
    return true;
  }
  if (Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return false;
  const { keys, values } = shape;
  let i = 0;
  for (const key in value) {
    if (key !== keys[i] || !sameJson((value as Record<string, unknown>)[key], values[i]!)) {
      return false;
    }
    i++;
  }
  return i === keys.length;
}
