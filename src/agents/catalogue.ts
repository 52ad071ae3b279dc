/**
 * The agent catalogue (ARCHITECTURE §7): role → display name, description, default tier and
 * persona, from `workflows/agents.yaml` plus the `*.yaml` files of an extra directory
 * (`AGENTIC_EXTERNAL_AGENTS_DIR`). Re-read on every call (the spec: no caching); a later file
 * overrides an earlier one role by role.
 *
 * File format:
 * ```yaml
 * agents:
 *   reviewer:
 *     name: Code Reviewer
 *     description: Reviews code.
 *     tier: 2
 *     persona: You are a senior engineer...
 * ```
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { statSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, ERROR_CODES, type ErrorDetail } from '../errors.js';
import type { ContentLimits } from '../workflow/limits.js';
import { parseWorkflowYaml } from '../workflow/parse.js';
import { MAX_TIER } from '../workflow/agent-names.js';

export interface AgentInfo {
  /** The role in `tier{N}_{role}`. */
  role: string;
  /** Display name. */
  name: string;
  description: string;
  /** Default tier, 1–5. */
  tier: number;
  /** System prompt of LLM steps with this role. */
  persona: string;
}

export interface AgentCatalogueSources {
  /** Catalogue files read in order (e.g. the package's `workflows/agents.yaml`). */
  files?: readonly string[];
  /** Directories whose `*.yaml`/`*.yml` files are read after `files`, sorted by name. */
  dirs?: readonly string[];
  /** Bounds of each file's YAML (docs/limits.md). @default the defaults of workflow YAML */
  limits?: Pick<ContentLimits, 'maxYamlBytes' | 'maxExpandedYamlBytes'>;
  /**
   * Parsed files by path, reused while a file's size and modification time are unchanged (a
   * changed file is read again on the next load). @default none: every file parsed per load
   */
  cache?: AgentCatalogueCache;
}

/**
 * The parsed catalogue files of one owner (a runtime): parsing the YAML is what a load costs
 * (about 1.3 ms for the shipped file, against a stat), and runs with LLM steps load it per run.
 */
export type AgentCatalogueCache = Map<
  string,
  { mtimeMs: number; size: number; agents: AgentInfo[] }
>;

const CATALOGUE_SCHEMA = {
  type: 'object',
  required: ['agents'],
  additionalProperties: false,
  properties: {
    agents: {
      type: 'object',
      propertyNames: { pattern: '^[a-z][a-z0-9_]*$' },
      additionalProperties: {
        type: 'object',
        required: ['name', 'description', 'tier', 'persona'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          description: { type: 'string' },
          tier: { type: 'integer', minimum: 1, maximum: MAX_TIER },
          persona: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;

interface CatalogueFile {
  agents: Record<string, Omit<AgentInfo, 'role'>>;
}

const ajv = new Ajv2020({ allErrors: true });
const validateCatalogue = ajv.compile<CatalogueFile>(CATALOGUE_SCHEMA);

function catalogueError(
  file: string,
  problem: string,
  details: ErrorDetail[] = [],
  cause?: unknown,
): AppError {
  return new AppError(ERROR_CODES.CONFIG, `agent catalogue ${file}: ${problem}`, {
    status: 500,
    expose: true,
    details,
    cause,
  });
}

async function readCatalogueFile(
  file: string,
  limits: AgentCatalogueSources['limits'],
): Promise<AgentInfo[]> {
  let data: unknown;
  try {
    // The bounds of workflow YAML (docs/limits.md): depth, aliases, size, no custom tags.
    const text = await readFile(file, 'utf8');
    data = parseWorkflowYaml(
      text,
      limits === undefined ? { field: 'file' } : { field: 'file', limits },
    );
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '') : 'unreadable';
    throw catalogueError(file, reason, [], error);
  }
  if (!validateCatalogue(data)) {
    const details = (validateCatalogue.errors ?? []).map((error) => {
      const params = error.params as Record<string, unknown>;
      const extra = [params.additionalProperty, params.missingProperty, params.propertyName].find(
        (value): value is string => typeof value === 'string',
      );
      const path = error.instancePath.split('/').filter((part) => part !== '');
      const loc = extra === undefined ? path : [...path, extra];
      return {
        loc,
        msg: `${loc.join('.') || 'file'}: ${error.message ?? 'invalid'}`,
        type: `value_error.${error.keyword}`,
      };
    });
    throw catalogueError(file, details.map((detail) => detail.msg).join('; '), details);
  }
  return Object.entries(data.agents).map(([role, info]) => ({ role, ...info }));
}

async function yamlFilesOf(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter(
        (entry) => entry.isFile() && /\.ya?ml$/.test(entry.name) && !entry.name.startsWith('.'),
      )
      .map((entry) => join(dir, entry.name))
      .sort();
  } catch (error) {
    throw catalogueError(dir, 'directory cannot be read', [], error);
  }
}

async function cachedCatalogueFile(
  file: string,
  sources: AgentCatalogueSources,
): Promise<AgentInfo[]> {
  const { cache } = sources;
  if (cache === undefined) return readCatalogueFile(file, sources.limits);
  let stamp: { mtimeMs: number; size: number } | undefined;
  try {
    // Synchronous, as the workflow registry's: a stat of a cached inode takes ~4 µs, the
    // promise version ~50 µs of CPU (a thread-pool hop and its wake-ups), per run.
    stamp = statSync(file, { throwIfNoEntry: false });
  } catch {
    stamp = undefined;
  }
  if (stamp === undefined) {
    // A file that cannot be stat'ed is read for real, which reports why.
    cache.delete(file);
    return readCatalogueFile(file, sources.limits);
  }
  const hit = cache.get(file);
  if (hit !== undefined && hit.mtimeMs === stamp.mtimeMs && hit.size === stamp.size) {
    return hit.agents;
  }
  const agents = await readCatalogueFile(file, sources.limits);
  cache.set(file, { mtimeMs: stamp.mtimeMs, size: stamp.size, agents });
  return agents;
}

/** Reads the catalogue; throws an AppError naming the file for a bad file. */
export async function loadAgentCatalogue(sources: AgentCatalogueSources): Promise<AgentInfo[]> {
  const files = [...(sources.files ?? [])];
  for (const dir of sources.dirs ?? []) files.push(...(await yamlFilesOf(dir)));
  const byRole = new Map<string, AgentInfo>();
  for (const file of files) {
    for (const agent of await cachedCatalogueFile(file, sources)) {
      byRole.set(agent.role, agent);
    }
  }
  return [...byRole.values()];
}

/**
 * {@link loadAgentCatalogue} for one owner (a runtime) that loads per call, as the spec wants
 * (an edited file applies to the next run), with a parse cache, and shares a load among the
 * calls made while it is in flight: a burst of run starts (hundreds arriving in one poll
 * phase) then costs one `stat` per file instead of one each, each of which is a hop through
 * the libuv thread pool on the burst's event-loop turn. A call shares a lookup begun at most
 * one `stat` before it, so a file edited before that lookup began is seen.
 */
export function createAgentCatalogueLoader(
  sources: Omit<AgentCatalogueSources, 'cache'>,
): () => Promise<AgentInfo[]> {
  const cache: AgentCatalogueCache = new Map();
  let inFlight: Promise<AgentInfo[]> | undefined;
  return () => {
    if (inFlight === undefined) {
      const load = loadAgentCatalogue({ ...sources, cache });
      inFlight = load;
      const settle = (): void => {
        inFlight = undefined;
      };
      load.then(settle, settle);
    }
    return inFlight;
  };
}

/** The entry for a role, or undefined. */
export function findAgent(catalogue: readonly AgentInfo[], role: string): AgentInfo | undefined {
  return catalogue.find((agent) => agent.role === role);
}
