/**
 * The dataset catalogue: repository datasets (`<eval dir>/datasets/`, shipped under
 * `workflows/eval/`), local datasets (`AGENTIC_LOCAL_DATASETS_DIR`) and eval sets
 * (`<eval dir>/eval_sets.json`, groups of dataset ids with a rubric). Files are looked up per
 * call (they may be edited while the service runs) and read once per size and mtime (see
 * dataset-store.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import type { InputSpec } from '../workflow/types.js';
import {
  DATASET_SOURCES,
  MAX_DATASET_BYTES,
  jsonProblem,
  listDatasetIds,
  type Dataset,
  type DatasetSource,
  type Sample,
} from './dataset-files.js';
import { DATASET_CACHE_BYTES, createDatasetStore, type DatasetFileRead } from './dataset-store.js';
import { adaptSample } from './samples.js';

export interface DatasetOption {
  id: string;
  name: string;
  source: DatasetSource;
  description: string;
  sample_count: number;
  format: 'json' | 'jsonl';
  compatible_workflows: string[];
}

export interface EvalSet {
  id: string;
  name: string;
  description: string;
  datasets: string[];
  rubric: string | null;
}

export interface DatasetCatalogueOptions {
  /** The eval directory holding `datasets/`, `rubrics/` and `eval_sets.json`. */
  evalDir: string;
  /** Local datasets directory. */
  localDir: string;
  /** Largest dataset file read (bytes); bigger is a 422. @default 16777216 (16 MiB) */
  maxFileBytes?: number;
  /**
   * Bytes of JSONL indexes and parsed JSON datasets kept between requests.
   * @default 67108864 (64 MiB)
   */
  cacheBytes?: number;
  /** Told of every dataset file read (whole, or only some samples). */
  onFileRead?: (read: DatasetFileRead) => void;
}

/** A workflow as the catalogue needs it: its name and declared inputs. */
export interface WorkflowInputs {
  name: string;
  inputs: Readonly<Record<string, InputSpec>>;
}

export interface DatasetCatalogue {
  readonly rubricsDir: string;
  list(): Promise<{ repository: DatasetOption[]; local: DatasetOption[] }>;
  get(source: DatasetSource, id: string): Promise<Dataset>;
  evalSets(): Promise<EvalSet[]>;
}

/** `repository` or `local`; anything else is a 422 naming the field. */
export function parseDatasetSource(value: unknown, loc: (string | number)[]): DatasetSource {
  if (typeof value === 'string' && (DATASET_SOURCES as readonly string[]).includes(value)) {
    return value as DatasetSource;
  }
  const msg = `dataset_source must be one of ${DATASET_SOURCES.join(', ')}`;
  throw new ValidationError(msg, [{ loc, msg, type: 'value_error.dataset_source' }]);
}

/** 422 when `index` is not a sample of the dataset. */
export function checkSampleIndex(dataset: Dataset, index: number, loc: (string | number)[]): void {
  if (Number.isInteger(index) && index >= 0 && index < dataset.sampleCount) return;
  const msg = `sample_index ${index} is out of range: ${dataset.source}/${dataset.id} has ${dataset.sampleCount} samples`;
  throw new ValidationError(msg, [{ loc, msg, type: 'value_error.sample_index' }]);
}

/** The sample at `index` (only it is read); 422 when out of range. */
export async function sampleAt(
  dataset: Dataset,
  index: number,
  loc: (string | number)[],
): Promise<Sample> {
  checkSampleIndex(dataset, index, loc);
  const [sample] = await dataset.read([index]);
  if (sample === undefined) throw new Error(`sample ${index} was not read`);
  return sample;
}

export function toOption(dataset: Dataset): DatasetOption {
  return {
    id: dataset.id,
    name: dataset.name,
    source: dataset.source,
    description: dataset.description,
    sample_count: dataset.sampleCount,
    format: dataset.format,
    compatible_workflows: dataset.compatibleWorkflows,
  };
}

/** Whether a dataset suits a workflow: it says so, or its first sample maps onto the inputs. */
export async function isCompatible(dataset: Dataset, workflow: WorkflowInputs): Promise<boolean> {
  if (dataset.compatibleWorkflows.includes(workflow.name)) return true;
  if (dataset.sampleCount === 0) return false;
  const [first] = await dataset.read([0]);
  return first !== undefined && adaptSample(dataset, first, workflow).compatible;
}

export function createDatasetCatalogue(options: DatasetCatalogueOptions): DatasetCatalogue {
  const dirs: Record<DatasetSource, string> = {
    repository: join(options.evalDir, 'datasets'),
    local: options.localDir,
  };
  const store = createDatasetStore({
    maxFileBytes: options.maxFileBytes ?? MAX_DATASET_BYTES,
    cacheBytes: options.cacheBytes ?? DATASET_CACHE_BYTES,
    ...(options.onFileRead === undefined ? {} : { onFileRead: options.onFileRead }),
  });

  async function all(source: DatasetSource): Promise<DatasetOption[]> {
    const out: DatasetOption[] = [];
    for (const id of await listDatasetIds(dirs[source])) {
      // An unreadable file is left out of the listing; asking for it by id says why.
      const dataset = await store.open(dirs[source], source, id).catch(() => undefined);
      if (dataset !== undefined) out.push(toOption(dataset));
    }
    return out;
  }

  return {
    rubricsDir: join(options.evalDir, 'rubrics'),
    async list() {
      return { repository: await all('repository'), local: await all('local') };
    },
    async get(source, id) {
      return store.open(dirs[parseDatasetSource(source, ['dataset_source'])], source, id);
    },
    async evalSets() {
      let text: string;
      try {
        text = await readFile(join(options.evalDir, 'eval_sets.json'), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (error) {
        // V8's message quotes the start of the text: say where, not what (no cause, which would
        // carry that message into the log).
        // eslint-disable-next-line preserve-caught-error
        throw new Error(`eval_sets.json is ${jsonProblem(error)}`);
      }
      if (!Array.isArray(data)) return [];
      return data
        .filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null)
        .filter((s) => typeof s.id === 'string')
        .map((s) => ({
          id: String(s.id),
          name: typeof s.name === 'string' ? s.name : String(s.id),
          description: typeof s.description === 'string' ? s.description : '',
          datasets: Array.isArray(s.datasets)
            ? s.datasets.filter((d) => typeof d === 'string')
            : [],
          rubric: typeof s.rubric === 'string' ? s.rubric : null,
        }));
    },
  };
}
