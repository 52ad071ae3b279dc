/**
 * Dataset files: `<id>.json` (an array of samples, or `{name, description,
 * compatible_workflows, input_mapping, samples}`) or `<id>.jsonl` (one sample object per line).
 * Ids are file stems, checked before any path is built (a traversal attempt is a 404).
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, NotFoundError, ValidationError } from '../errors.js';
import { safeFileName } from '../security/path-safety.js';

/** Largest dataset file read (bytes); bigger files are listed as unreadable. */
export const MAX_DATASET_BYTES = 16 * 1024 * 1024;
/** Dataset ids: file stems without the extension. */
export const DATASET_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
export const DATASET_SOURCES = ['repository', 'local'] as const;
export type DatasetSource = (typeof DATASET_SOURCES)[number];

export type Sample = Record<string, unknown>;

export interface Dataset {
  id: string;
  source: DatasetSource;
  name: string;
  description: string;
  format: 'json' | 'jsonl';
  samples: Sample[];
  /** Workflows the dataset says it is made for. */
  compatibleWorkflows: string[];
  /** Per workflow: workflow input → sample field (dot path). */
  inputMapping: Record<string, Record<string, string>>;
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

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function invalid(source: string, id: string, why: string): ValidationError {
  const msg = `dataset ${source}/${id} cannot be read: ${why}`;
  return new ValidationError(msg, [{ loc: ['dataset_id'], msg, type: 'value_error.dataset' }]);
}

/** Reads one dataset. 404 when the id is unsafe or no file has it; 422 when the file is bad. */
export async function readDataset(
  dir: string,
  source: DatasetSource,
  id: string,
): Promise<Dataset> {
  // An unsafe id is not echoed back: the 404 says no more than it must.
  if (!DATASET_ID.test(id)) throw new NotFoundError('Dataset not found', ERROR_CODES.NOT_FOUND);
  for (const format of ['json', 'jsonl'] as const) {
    const path = join(dir, safeFileName(`${id}.${format}`));
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() !== true) continue;
    if (info.size > MAX_DATASET_BYTES) throw invalid(source, id, `over ${MAX_DATASET_BYTES} bytes`);
    const text = await readFile(path, 'utf8');
    return format === 'json' ? fromJson(text, source, id) : fromJsonl(text, source, id);
  }
  throw datasetNotFound(source, id);
}

function fromJson(text: string, source: DatasetSource, id: string): Dataset {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw invalid(source, id, error instanceof Error ? error.message : 'invalid JSON');
  }
  const body = Array.isArray(data) ? { samples: data } : data;
  if (!isObject(body) || !Array.isArray(body.samples)) {
    throw invalid(source, id, 'expected an array of samples or an object with samples');
  }
  return build(source, id, 'json', body.samples, body);
}

function fromJsonl(text: string, source: DatasetSource, id: string): Dataset {
  const samples: unknown[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      samples.push(JSON.parse(line));
    } catch {
      throw invalid(source, id, `line ${i + 1} is not JSON`);
    }
  });
  return build(source, id, 'jsonl', samples, {});
}

function build(
  source: DatasetSource,
  id: string,
  format: Dataset['format'],
  samples: unknown[],
  meta: Record<string, unknown>,
): Dataset {
  const bad = samples.findIndex((s) => !isObject(s));
  if (bad >= 0) throw invalid(source, id, `sample ${bad} is not an object`);
  const mapping: Dataset['inputMapping'] = {};
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
    id,
    source,
    name: typeof meta.name === 'string' ? meta.name : id,
    description: typeof meta.description === 'string' ? meta.description : '',
    format,
    samples: samples as Sample[],
    compatibleWorkflows: Array.isArray(meta.compatible_workflows)
      ? meta.compatible_workflows.filter((w): w is string => typeof w === 'string')
      : [],
    inputMapping: mapping,
  };
}
