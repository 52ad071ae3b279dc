/**
 * Dataset files: `<id>.json` (an array of samples, or `{name, description,
 * compatible_workflows, input_mapping, samples}`) or `<id>.jsonl` (one sample object per line).
 * Ids are file stems, checked before any path is built (a traversal attempt is a 404); a file
 * that is a link leaving its directory, or over the byte bound, is refused before it is read.
 * Errors never quote the file: a dataset may be a link to anything the process can read.
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, isAbsolute, sep } from 'node:path';
import { ERROR_CODES, NotFoundError, ValidationError } from '../errors.js';
import { safeFileName } from '../security/path-safety.js';

/** Default largest dataset file read (bytes): `AGENTIC_MAX_DATASET_BYTES`. */
export const MAX_DATASET_BYTES = 16 * 1024 * 1024;
/** Dataset ids: file stems without the extension. */
export const DATASET_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
export const DATASET_SOURCES = ['repository', 'local'] as const;
export type DatasetSource = (typeof DATASET_SOURCES)[number];
export const DATASET_FORMATS = ['json', 'jsonl'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

export type Sample = Record<string, unknown>;

/** What a dataset says about itself (the JSON form's fields; a JSONL file has none). */
export interface DatasetMeta {
  name: string;
  description: string;
  /** Workflows the dataset says it is made for. */
  compatibleWorkflows: string[];
  /** Per workflow: workflow input → sample field (dot path). */
  inputMapping: Record<string, Record<string, string>>;
}

/**
 * One dataset. Samples are read on demand: a JSONL file through its index of line offsets, only
 * the lines asked for (see dataset-store.ts).
 */
export interface Dataset extends DatasetMeta {
  id: string;
  source: DatasetSource;
  format: DatasetFormat;
  sampleCount: number;
  /** The samples at `indices` (each within `0 … sampleCount - 1`), in that order. */
  read(indices: readonly number[]): Promise<Sample[]>;
}

/** A dataset file found for an id: where it is, and the size and mtime that key its cache. */
export interface DatasetFile {
  path: string;
  format: DatasetFormat;
  size: number;
  mtimeMs: number;
}

export function datasetNotFound(source: string, id: string): NotFoundError {
  return new NotFoundError(`dataset not found: ${source}/${id}`, ERROR_CODES.NOT_FOUND);
}

/** Dataset ids in a directory (sorted), `.json` and `.jsonl` files only; none when it is missing. */
export async function listDatasetIds(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
  const ids = new Set<string>();
  for (const name of names) {
    const match = /^(.*)\.(json|jsonl)$/.exec(name);
    if (match?.[1] !== undefined && DATASET_ID.test(match[1])) ids.add(match[1]);
  }
  return [...ids].sort();
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The 422 for a dataset that cannot be read; `why` must never quote the file. */
export function invalidDataset(source: string, id: string, why: string): ValidationError {
  const msg = `dataset ${source}/${id} cannot be read: ${why}`;
  return new ValidationError(msg, [{ loc: ['dataset_id'], msg, type: 'value_error.dataset' }]);
}

/** Why `JSON.parse` failed, without the text it quotes (V8 puts the start of it in the message). */
export function jsonProblem(error: unknown): string {
  const at = error instanceof Error ? /at position (\d+)/.exec(error.message)?.[1] : undefined;
  return at === undefined ? 'not valid JSON' : `not valid JSON (at character ${at})`;
}

function isInside(base: string, target: string): boolean {
  const rel = relative(base, target);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/**
 * Finds the file of a dataset. 404 when the id is unsafe or no file has it; 422 when the file is
 * a link whose target lies outside `dir`, or is bigger than `maxBytes`.
 */
export async function findDatasetFile(
  dir: string,
  source: DatasetSource,
  id: string,
  maxBytes: number,
): Promise<DatasetFile> {
  // An unsafe id is not echoed back: the 404 says no more than it must.
  if (!DATASET_ID.test(id)) throw new NotFoundError('Dataset not found', ERROR_CODES.NOT_FOUND);
  for (const format of DATASET_FORMATS) {
    const path = join(dir, safeFileName(`${id}.${format}`));
    const link = await lstat(path).catch(() => undefined);
    if (link === undefined) continue;
    if (link.isSymbolicLink()) {
      const [realDir, target] = await Promise.all([
        realpath(dir),
        realpath(path).catch(() => undefined),
      ]);
      if (target === undefined) continue;
      if (!isInside(realDir, target)) {
        throw invalidDataset(source, id, 'it is a link to a file outside the datasets directory');
      }
    }
    const info = link.isSymbolicLink() ? await stat(path).catch(() => undefined) : link;
    if (info?.isFile() !== true) continue;
    if (info.size > maxBytes) {
      throw invalidDataset(
        source,
        id,
        `${info.size} bytes, more than ${maxBytes} (AGENTIC_MAX_DATASET_BYTES)`,
      );
    }
    return { path, format, size: info.size, mtimeMs: info.mtimeMs };
  }
  throw datasetNotFound(source, id);
}

/** The samples and what a JSON dataset says about itself; 422 when it is not one. */
export function parseJsonDataset(
  text: string,
  source: DatasetSource,
  id: string,
): { samples: Sample[]; meta: DatasetMeta } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw invalidDataset(source, id, jsonProblem(error));
  }
  const body = Array.isArray(data) ? { samples: data } : data;
  if (!isObject(body) || !Array.isArray(body.samples)) {
    throw invalidDataset(source, id, 'expected an array of samples or an object with samples');
  }
  const samples: unknown[] = body.samples;
  const bad = samples.findIndex((s) => !isObject(s));
  if (bad >= 0) throw invalidDataset(source, id, `sample ${bad} is not an object`);
  return { samples: samples as Sample[], meta: datasetMeta(id, body) };
}

/** A dataset's name, description, compatible workflows and input mapping (defaults: none). */
export function datasetMeta(id: string, meta: Record<string, unknown>): DatasetMeta {
  const mapping: DatasetMeta['inputMapping'] = {};
  if (isObject(meta.input_mapping)) {
    for (const [workflow, fields] of Object.entries(meta.input_mapping)) {
      if (!isObject(fields)) continue;
      mapping[workflow] = Object.fromEntries(
        Object.entries(fields).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        ),
      );
    }
  }
  return {
    name: typeof meta.name === 'string' ? meta.name : id,
    description: typeof meta.description === 'string' ? meta.description : '',
    compatibleWorkflows: Array.isArray(meta.compatible_workflows)
      ? meta.compatible_workflows.filter((w): w is string => typeof w === 'string')
      : [],
    inputMapping: mapping,
  };
}
