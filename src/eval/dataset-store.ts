/**
 * Dataset files read once per (path, size, mtime) and kept in an LRU bounded in bytes: a JSONL
 * file as its index of line offsets (16 bytes a sample; samples are read by offset when asked
 * for), a JSON file as its parsed samples (counted as its file size; a large one is parsed in a
 * worker thread and kept as one JSON text per sample). Concurrent requests for a
 * file being read share that one read; a file that cannot be read is remembered too, so a bad
 * 15 MB file is not read again for every request until it changes.
 */
import { open } from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import { ValidationError } from '../errors.js';
import {
  datasetMeta,
  findDatasetFile,
  invalidDataset,
  parseJsonDataset,
  type Dataset,
  type DatasetFile,
  type DatasetMeta,
  type DatasetSource,
  type Sample,
} from './dataset-files.js';
import { parseJsonDatasetInWorker } from './dataset-json-worker.js';
import { indexBytes, indexJsonl, readJsonlSamples, type JsonlIndex } from './dataset-jsonl.js';

/** Default bytes of dataset indexes and parsed JSON datasets kept: `AGENTIC_DATASET_CACHE_BYTES`. */
export const DATASET_CACHE_BYTES = 64 * 1024 * 1024;

/** One read of a dataset file: all of it (`index`, `whole`) or only some samples (`samples`). */
export interface DatasetFileRead {
  path: string;
  kind: 'index' | 'whole' | 'samples';
  bytes: number;
}

export interface DatasetStoreOptions {
  /** Largest dataset file read; bigger is a 422. */
  maxFileBytes: number;
  /** Bytes the cache of indexes and parsed JSON datasets may hold. */
  cacheBytes: number;
  /** Told of every file read (tests and metrics). */
  onFileRead?: (read: DatasetFileRead) => void;
}

export interface DatasetStore {
  /** The dataset `id` in `dir`: 404 when there is none, 422 when its file cannot be read. */
  open(dir: string, source: DatasetSource, id: string): Promise<Dataset>;
}

type Content =
  | { format: 'jsonl'; index: JsonlIndex }
  | { format: 'json'; samples: Sample[]; meta: DatasetMeta }
  /** A large JSON file, parsed in a worker: each sample as its JSON text, parsed when asked for. */
  | { format: 'json'; texts: string[]; meta: DatasetMeta };

/**
 * JSON files above this size are parsed in a worker thread. JSON.parse takes ~75 ms a MB on a
 * loaded 2-core machine (15 MB: 1.1–1.6 s); a worker costs ~30 ms to start.
 */
export const JSON_WORKER_BYTES = 256 * 1024;

interface Entry {
  size: number;
  mtimeMs: number;
  /** What the file holds, or why it cannot be read. */
  content: Content | { error: Error };
}

/** Reads exactly `size` bytes (the size the bound was checked on, even if the file grew). */
async function readPrefix(path: string, size: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(size);
    const { bytesRead } = await handle.read(buffer, 0, size, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function entryBytes(entry: Entry): number {
  const { content } = entry;
  if ('error' in content) return 256;
  return content.format === 'jsonl' ? indexBytes(content.index) + 256 : entry.size + 256;
}

export function createDatasetStore(options: DatasetStoreOptions): DatasetStore {
  const cache = new LRUCache<string, Entry>({
    // 0 keeps nothing (lru-cache needs a positive bound; no entry fits in one byte).
    maxSize: Math.max(1, options.cacheBytes),
    sizeCalculation: entryBytes,
  });
  const reading = new Map<string, Promise<Entry>>();

  async function load(file: DatasetFile, source: DatasetSource, id: string): Promise<Entry> {
    const fail = (why: string): Error => invalidDataset(source, id, why);
    let content: Entry['content'];
    try {
      if (file.format === 'jsonl') {
        options.onFileRead?.({ path: file.path, kind: 'index', bytes: file.size });
        content = { format: 'jsonl', index: await indexJsonl(file.path, file.size, fail) };
      } else if (file.size > JSON_WORKER_BYTES) {
        options.onFileRead?.({ path: file.path, kind: 'whole', bytes: file.size });
        const parsed = await parseJsonDatasetInWorker(file.path, file.size);
        if ('problem' in parsed) throw fail(parsed.problem);
        content = { format: 'json', texts: parsed.texts, meta: datasetMeta(id, parsed.meta) };
      } else {
        options.onFileRead?.({ path: file.path, kind: 'whole', bytes: file.size });
        const text = (await readPrefix(file.path, file.size)).toString('utf8');
        content = { format: 'json', ...parseJsonDataset(text, source, id) };
      }
    } catch (error) {
      // Only a verdict on the file's content is kept; a failed read (EIO, EMFILE) is retried.
      if (!(error instanceof ValidationError)) throw error;
      content = { error };
    }
    const entry: Entry = { size: file.size, mtimeMs: file.mtimeMs, content };
    cache.set(file.path, entry);
    return entry;
  }

  async function entryOf(file: DatasetFile, source: DatasetSource, id: string): Promise<Entry> {
    const cached = cache.get(file.path);
    if (cached?.size === file.size && cached.mtimeMs === file.mtimeMs) return cached;
    const key = `${file.path}\0${file.size}\0${file.mtimeMs}`;
    let pending = reading.get(key);
    if (pending === undefined) {
      pending = load(file, source, id).finally(() => reading.delete(key));
      reading.set(key, pending);
    }
    return pending;
  }

  return {
    async open(dir, source, id) {
      const file = await findDatasetFile(dir, source, id, options.maxFileBytes);
      const { content } = await entryOf(file, source, id);
      if ('error' in content) throw content.error;
      if (content.format === 'json') {
        const sample = (i: number): Sample | undefined =>
          'samples' in content
            ? content.samples[i]
            : content.texts[i] === undefined
              ? undefined
              : (JSON.parse(content.texts[i]) as Sample);
        return {
          id,
          source,
          format: 'json',
          ...content.meta,
          sampleCount: 'samples' in content ? content.samples.length : content.texts.length,
          read: (indices) =>
            Promise.resolve(indices.map(sample).filter((s): s is Sample => s !== undefined)),
        };
      }
      const { index } = content;
      return {
        id,
        source,
        format: 'jsonl',
        ...datasetMeta(id, {}),
        sampleCount: index.starts.length,
        read: (indices) =>
          readJsonlSamples(file.path, index, indices, (why) => invalidDataset(source, id, why), {
            onRead: (bytes) => options.onFileRead?.({ path: file.path, kind: 'samples', bytes }),
          }),
      };
    },
  };
}
