/**
 * Parses a large JSON dataset file in a worker thread (`workers/json-dataset-worker.mjs`): on the
 * main thread JSON.parse of a 15 MB file held the event loop for 1.1–1.6 s. The worker answers the
 * dataset's metadata and each sample as its own JSON text; the main thread parses only the
 * samples asked for. One worker per read: a file is read once per (size, mtime).
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../config/index.js';

const WORKER_PATH = join(packageRoot, 'workers', 'json-dataset-worker.mjs');

/** The worker's answer: the dataset, or why its content is not one (never quoting it). */
export type JsonDatasetParse =
  { meta: Record<string, unknown>; texts: string[] } | { problem: string };

export function parseJsonDatasetInWorker(path: string, size: number): Promise<JsonDatasetParse> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_PATH, { workerData: { path, size } });
    let answered = false;
    worker.once('message', (message: JsonDatasetParse | { error: string }) => {
      answered = true;
      if ('error' in message) reject(new Error(`dataset file cannot be read: ${message.error}`));
      else resolve(message);
      void worker.terminate().catch(() => undefined);
    });
    worker.once('error', (error) => {
      answered = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`dataset worker exited with code ${code} before answering`));
    });
  });
}
