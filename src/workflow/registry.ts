/**
 * The workflows directory: lists, loads (parse → validate → compile, cached until the file
 * changes) and saves workflow YAML files. Names and paths given by clients are contained: a
 * workflow is a `*.yaml`/`*.yml` file whose real path lies inside the directory.
 */
import { lstatSync, statSync, type BigIntStats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DependencyError, ERROR_CODES, NotFoundError, ValidationError } from '../errors.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import { compileWorkflow } from './compile.js';
import { DEFAULT_CONTENT_LIMITS, type ContentLimits } from './limits.js';
import { parseWorkflowYaml } from './parse.js';
import type { CompiledWorkflow } from './types.js';
import { assertWorkflowCalls, calledWorkflow } from './kinds/workflow-call.js';
import { isErrno, isWorkflowName, stem, workflowFiles, workflowNameOf } from './workflow-files.js';

export { isWorkflowName, workflowNameOf };

const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'ENOSPC']);
/**
 * How long a resolved name → real path is trusted before it is resolved again (a rename, a new
 * `.yaml` beside a `.yml` or a retargeted symlink is seen within this time; a changed file's
 * content is seen at once: its stamp is checked on every `get`).
 */
const RESOLVE_TTL_MS = 1000;

export interface LoadedWorkflow {
  name: string;
  /** Real path of the file (for the process; never sent to clients). */
  path: string;
  /** The file's path relative to the workflows directory (what clients see). */
  file: string;
  /** The file's text, exactly as stored. */
  yamlText: string;
  document: unknown;
  compiled: CompiledWorkflow;
}

export interface WorkflowRegistryOptions {
  /** The workflows directory. */
  dir: string;
  /**
   * Why saving is refused (the package's shipped directory, which a reinstall would wipe):
   * {@link WorkflowRegistry.save} then throws a 503 DependencyError with this message.
   * @default undefined (writable)
   */
  readOnlyReason?: string | undefined;
  /** Agent names registered by the application, accepted by validation. @default none */
  customAgents?: ReadonlySet<string> | undefined;
  /** The configured MCP servers, checked in `tools:` (see ValidateWorkflowOptions). @default not checked */
  mcpServers?: ReadonlySet<string> | undefined;
  /** Bounds of YAML, templates and step inputs (docs/limits.md). @default {@link DEFAULT_CONTENT_LIMITS} */
  limits?: ContentLimits | undefined;
}

export interface WorkflowRegistry {
  readonly dir: string;
  /** Why saving is refused, or undefined when the directory is writable. */
  readonly readOnlyReason: string | undefined;
  /** Workflow names (file stems), sorted; the agent catalogue is not one. */
  list(): Promise<string[]>;
  /**
   * Loads a workflow by name or by a relative YAML path inside the directory.
   * @throws NotFoundError (`workflow_not_found`) when there is no such file
   * @throws ValidationError (`workflow_invalid`) when it does not parse or validate
   */
  get(nameOrPath: string): Promise<LoadedWorkflow>;
  /** The real path of a workflow, or undefined when absent or outside the directory. */
  resolve(nameOrPath: string): string | undefined;
  /**
   * Validates `yamlText` fully (its name must be `name`, given with or without `.yaml`/`.yml`),
   * then writes it atomically as given.
   * @throws ValidationError for a bad name or an invalid workflow
   * @throws DependencyError (503) when the directory is read-only or not writable
   */
  save(name: string, yamlText: string): Promise<LoadedWorkflow>;
  /**
   * Validates and compiles a document with this registry's options (the registered agent
   * names), as `get` and `save` do.
   * @throws ValidationError for an invalid workflow
   */
  compile(document: unknown, expectedName?: string): CompiledWorkflow;
  /**
   * The checks of a workflow's sub-workflow steps that need the other workflows of the directory
   * (kinds/workflow-call.ts: unknown child, inputs and outputs, recursion, depth). `get` and
   * `save` run them; inline sources call this after `compile`.
   * @throws ValidationError listing the problems
   */
  checkCalls(workflow: CompiledWorkflow): Promise<void>;
  /**
   * Parses YAML text within this registry's bounds, as `get` and `save` do; `field` is the first
   * element of error locations (default `yaml_text`).
   * @throws ValidationError for text that does not parse or exceeds a bound
   */
  parse(yamlText: string, field?: string): unknown;
  /** Forgets cached workflows: one name, or all. */
  invalidate(name?: string): void;
}

interface CacheEntry {
  stamp: string;
  loaded: LoadedWorkflow;
}

interface Resolution {
  path: string;
  /** Epoch ms after which the name is resolved again. */
  until: number;
}

export function createWorkflowRegistry(options: WorkflowRegistryOptions): WorkflowRegistry {
  const dir = options.dir;
  const limits = options.limits ?? DEFAULT_CONTENT_LIMITS;
  const cache = new Map<string, CacheEntry>();
  /** Successful resolutions by name or path (failures are not remembered). */
  const resolutions = new Map<string, Resolution>();
  const files = workflowFiles(dir);
  const realRoot = (): string | undefined => files.realRoot();
  const resolve = (nameOrPath: string): string | undefined => files.resolve(nameOrPath);
  const list = (): Promise<string[]> => files.list();

  /**
   * {@link resolve} through the resolution cache, with the file's stats: one `lstat` of the
   * remembered real path while it is fresh and still a regular file (a real path has no
   * symlink in it), else a full resolution.
   */
  function resolveWithStats(nameOrPath: string): { path: string; info: BigIntStats } | undefined {
    const known = resolutions.get(nameOrPath);
    if (known !== undefined) {
      if (Date.now() < known.until) {
        const info = lstatSync(known.path, { bigint: true, throwIfNoEntry: false });
        if (info?.isFile() === true) return { path: known.path, info };
      }
      resolutions.delete(nameOrPath);
    }
    const path = resolve(nameOrPath);
    if (path === undefined) return undefined;
    const info = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (info === undefined) return undefined;
    if (resolutions.size >= 1024) resolutions.clear();
    resolutions.set(nameOrPath, { path, until: Date.now() + RESOLVE_TTL_MS });
    return { path, info };
  }

  async function load(path: string, info?: BigIntStats): Promise<LoadedWorkflow> {
    info ??= statSync(path, { bigint: true });
    const stamp = `${info.ino}:${info.size}:${info.mtimeNs}`;
    const cached = cache.get(path);
    if (cached?.stamp === stamp) return cached.loaded;
    const yamlText = await readFile(path, 'utf8');
    const name = stem(path);
    const document = parse(yamlText);
    const compiled = compile(document, name);
    const file = relative(realRoot() ?? dir, path);
    const loaded: LoadedWorkflow = { name, path, file, yamlText, document, compiled };
    cache.set(path, { stamp, loaded });
    return loaded;
  }

  /** Loads a workflow checked on its own (a child, for {@link checkCalls}): none when absent. */
  async function child(name: string): Promise<CompiledWorkflow | undefined> {
    if (!isWorkflowName(name)) return undefined;
    try {
      return (await getOwn(name)).compiled;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  function checkCalls(workflow: CompiledWorkflow): Promise<void> {
    return assertWorkflowCalls(workflow, child);
  }

  async function get(nameOrPath: string): Promise<LoadedWorkflow> {
    const loaded = await getOwn(nameOrPath);
    // Only workflows with sub-workflow steps have anything to check (one lookup per child).
    if (loaded.compiled.steps.some((step) => calledWorkflow(step) !== undefined)) {
      await checkCalls(loaded.compiled);
    }
    return loaded;
  }

  async function getOwn(nameOrPath: string): Promise<LoadedWorkflow> {
    const found = resolveWithStats(nameOrPath);
    if (found === undefined) {
      throw new NotFoundError(`workflow '${nameOrPath}' not found`, ERROR_CODES.WORKFLOW_NOT_FOUND);
    }
    try {
      return await load(found.path, found.info);
    } catch (error) {
      if (isErrno(error, new Set(['ENOENT']))) {
        resolutions.delete(nameOrPath);
        throw new NotFoundError(
          `workflow '${nameOrPath}' not found`,
          ERROR_CODES.WORKFLOW_NOT_FOUND,
        );
      }
      throw error;
    }
  }

  async function save(given: string, yamlText: string): Promise<LoadedWorkflow> {
    const name = typeof given === 'string' ? workflowNameOf(given) : given;
    if (typeof name !== 'string' || !isWorkflowName(name)) {
      const msg = `'${String(given)}' cannot name a workflow: use letters, digits, '_', '.' and '-', not starting with '.'`;
      throw new ValidationError(
        msg,
        [{ loc: ['name'], msg, type: 'value_error.name' }],
        ERROR_CODES.WORKFLOW_INVALID,
      );
    }
    const document = parse(yamlText);
    await checkCalls(compile(document, name));
    if (options.readOnlyReason !== undefined) throw new DependencyError(options.readOnlyReason);
    const root = realRoot();
    if (root === undefined) throw new DependencyError('the workflows directory does not exist');
    // Write beside the name, never through a symlink to another workflow's file.
    const file =
      resolve(`${name}.yaml`) === undefined && resolve(`${name}.yml`) !== undefined
        ? 'yml'
        : 'yaml';
    const path = join(root, `${name}.${file}`);
    try {
      await writeFileAtomic(path, yamlText);
    } catch (error) {
      if (isErrno(error, UNWRITABLE))
        throw new DependencyError('the workflows directory is not writable', error);
      throw error;
    }
    invalidate(name);
    return load(path);
  }

  function parse(yamlText: string, field?: string): unknown {
    return parseWorkflowYaml(yamlText, field === undefined ? { limits } : { limits, field });
  }

  function compile(document: unknown, expectedName?: string): CompiledWorkflow {
    return compileWorkflow(document, {
      expectedName,
      customAgents: options.customAgents,
      mcpServers: options.mcpServers,
      limits,
    });
  }

  function invalidate(name?: string): void {
    // Resolutions are cheap to redo and a save can change one (a symlink replaced by a file).
    resolutions.clear();
    if (name === undefined) {
      cache.clear();
      return;
    }
    for (const [path, entry] of cache) if (entry.loaded.name === name) cache.delete(path);
  }

  return {
    dir,
    readOnlyReason: options.readOnlyReason,
    list,
    get,
    resolve,
    save,
    compile,
    checkCalls,
    parse,
    invalidate,
  };
}
