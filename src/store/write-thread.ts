/**
 * Atomic file writes on a dedicated worker thread. An async atomic write from the main thread
 * is five thread-pool round trips (open, write, close, rename, plus their promise callbacks),
 * each waking a pool thread: on a small, busy machine that context switching costs the event
 * loop more than the writes themselves. Here the main thread posts the writes requested in an
 * event-loop turn as one message (or, while the worker is busy with a batch, every write
 * requested meanwhile once it answers), the worker writes each file synchronously (temp
 * file + rename, so readers see the old content or the new, never a partial file), and answers
 * in one message. Writes are done in the order they were requested.
 *
 * The worker is started on first use and holds the process open only while writes are pending.
 * If it cannot start or dies, pending and later writes fall back to the async
 * {@link writeFileAtomic}.
 */
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../config/index.js';
import { writeFileAtomic } from './atomic-write.js';

interface Pending {
  request: WriteRequest;
  resolve: () => void;
  reject: (error: Error) => void;
}

const TEMP_PREFIX = `${process.pid.toString(36)}-${randomBytes(4).toString('hex')}-w`;
/** The worker's code: plain JavaScript shipped with the package (worker threads do not get tsx's loader). */
const WORKER_PATH = join(packageRoot, 'workers', 'write-worker.mjs');

/** One write request. */
interface WriteRequest {
  id: number;
  path: string;
  temp: string;
  data: string;
}

/** The answer to one {@link WriteRequest}. */
interface WriteReply {
  id: number;
  code?: string;
  message?: string;
}

let worker: Worker | undefined;
let broken = false;
let answered = false;
let nextId = 0;
const pending = new Map<number, Pending>();
let batch: WriteRequest[] = [];
let flushQueued = false;
/** A batch is with the worker: later writes wait and go together when it answers. */
let inFlight = false;

function fail(reply: WriteReply): Error {
  const error = new Error(reply.message ?? 'write failed') as NodeJS.ErrnoException;
  if (reply.code !== undefined) error.code = reply.code;
  return error;
}

/** The worker died or could not start: finish what it had with async writes. */
function fallBack(): void {
  broken = true;
  worker = undefined;
  inFlight = false;
  batch = [];
  const orphans = [...pending.values()];
  pending.clear();
  for (const { request, resolve, reject } of orphans) {
    writeFileAtomic(request.path, request.data).then(resolve, reject);
  }
}

function start(): Worker {
  // The worker only holds the batch in hand: a small heap keeps its memory (and the process's
  // RSS) flat however many files go through it. Exceeding it ends the worker: fallback.
  const created = new Worker(WORKER_PATH, {
    resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
  });
  created.on('message', (replies: WriteReply[]) => {
    answered = true;
    for (const reply of replies) {
      const entry = pending.get(reply.id);
      if (entry === undefined) continue;
      pending.delete(reply.id);
      if (reply.code === undefined) entry.resolve();
      else entry.reject(fail(reply));
    }
    inFlight = false;
    if (batch.length > 0) flush();
    else if (pending.size === 0) created.unref();
  });
  created.on('error', () => {
    if (worker === created) fallBack();
  });
  created.on('exit', () => {
    if (worker === created) fallBack();
  });
  return created;
}

/**
 * Posts the waiting writes unless a batch is already with the worker (group commit: under load
 * writes go in fewer, larger messages, each waking the worker once; when idle, at once).
 */
function flush(): void {
  flushQueued = false;
  if (inFlight || batch.length === 0) return;
  if (broken) {
    fallBack();
    return;
  }
  const requests = batch;
  batch = [];
  worker ??= start();
  worker.ref();
  inFlight = true;
  worker.postMessage(requests);
}

/**
 * How writes are done: `worker` once the thread has answered a batch, `fallback` after it failed
 * (async writes from the main thread), `idle` before the first answer.
 */
export function writeThreadStatus(): 'idle' | 'worker' | 'fallback' {
  return broken ? 'fallback' : answered ? 'worker' : 'idle';
}

/**
 * Writes `data` to `path` atomically (see the module comment). Resolves once the file is in
 * place; rejects with an Error carrying the errno `code` (ENOENT, EACCES, ...) otherwise.
 */
export function writeFileAtomicOffThread(path: string, data: string): Promise<void> {
  if (broken) return writeFileAtomic(path, data);
  return new Promise((resolve, reject) => {
    const id = nextId++;
    const temp = join(dirname(path), `.${basename(path)}.${TEMP_PREFIX}${id.toString(36)}.tmp`);
    const request: WriteRequest = { id, path, temp, data };
    pending.set(id, { request, resolve, reject });
    batch.push(request);
    if (!flushQueued) {
      flushQueued = true;
      setImmediate(flush);
    }
  });
}
