/**
 * Atomic file writes on a dedicated worker thread. An async atomic write from the main thread
 * is five thread-pool round trips (open, write, close, rename, plus their promise callbacks),
 * each waking a pool thread: on a small, busy machine that context switching costs the event
 * loop more than the writes themselves. Here the main thread posts the writes requested in an
 * event-loop turn as one message (or, while the worker is busy with a batch, the writes
 * requested meanwhile once it answers), the worker writes each file synchronously (temp file,
 * fsync, rename, so readers see the old content or the new, never a partial file), and answers
 * in one message. Writes are done in the order they were requested.
 *
 * A batch holds at most `maxBatch` writes and `maxBatchChars` characters of data (a single
 * larger write goes alone): the worker runs under `resourceLimits`, and a batch of every pending
 * write (tens of thousands at shutdown), or of a few run records and journal appends near their
 * bounds, would exceed them when the worker deserialises the message. If the worker dies
 * (killed, over its limits), the writes it held reject with code `EWORKER` (callers retry: a
 * write is idempotent), the death is reported to `onDeath` listeners, and the next batch starts
 * a new worker. After `maxRestarts` deaths in a row without an answer, writes fall back to the
 * async {@link writeFileAtomic}, still at most `maxBatch` at once (never one open file per
 * pending write: that is how the old fallback hit EMFILE).
 *
 * A write may name a process log (`log`: the runs directory's `.<owner id>` prefix): the worker
 * then makes it durable by appending it to that log with one fdatasync for the whole batch, and
 * writes the file without an fsync (group commit; the log is checkpointed and removed in the
 * background, see workers/write-worker.mjs and process-log.ts). A deferred write (`deferMs`, a
 * run's first record) is answered as soon as the batch's fdatasync returned, in a message of its
 * own before the batch's files are written. The fallback writes fsync each file instead.
 * `sync: false` writes without any fsync.
 */
import { basename, dirname, join } from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { packageRoot } from '../config/index.js';
import { appendFileSynced, writeFileAtomic } from '../files/atomic-write.js';
import { PROCESS_TOKEN } from '../files/process-token.js';

/** Writes `data` to `path` atomically; rejects with an Error carrying the errno `code`. */
export type FileWriter = (path: string, data: string) => Promise<void>;

/** The code of writes lost with a dead worker (retry them). */
export const WORKER_DIED = 'EWORKER';

/** Why a worker ended: `exitCode` and, when it failed, the error's code and message. */
export interface WorkerDeath {
  exitCode: number | undefined;
  code: string | undefined;
  message: string;
  /** Deaths in a row without an answer, this one included. */
  consecutive: number;
  /** Whether later writes go to a new worker (false: the async fallback from now on). */
  restarting: boolean;
}

export interface WriteThreadOptions {
  /** @default the package's `workers/write-worker.mjs` */
  workerPath?: string;
  /**
   * The worker only holds one batch: a small heap keeps its memory (and the process's RSS) flat.
   * @default { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 }
   */
  resourceLimits?: ResourceLimits;
  /** Writes per message to the worker (and writes at once in the fallback). @default 256 */
  maxBatch?: number;
  /**
   * Characters of data per message (a write bigger than this goes alone). A quarter of the
   * worker's old generation: one-byte text takes a byte per character in its heap, two-byte
   * text two. @default 8388608 (8 Mi)
   */
  maxBatchChars?: number;
  /** Deaths in a row before falling back to async writes. @default 5 */
  maxRestarts?: number;
  /** A process log generation is checkpointed once this big (bytes). @default 16777216 */
  checkpointBytes?: number;
  /** ... or once this old (ms). @default 10000 */
  checkpointMs?: number;
}

/** How one write is made durable (see the module comment). */
export interface WriteOptions {
  /** The process log prefix (`<runs dir>/.<owner id>`): durable through the log's group commit. */
  log?: string | undefined;
  /** `false`: no fsync at all (the record may be lost with the page cache). @default true */
  sync?: boolean;
  /**
   * With `log`: the file is written this many ms after the record is durable in the log, and
   * not at all if a later write of the same file comes first (a run's first record: most runs
   * end sooner). The write resolves once the record is durable in the log, without waiting for
   * the other files of its batch.
   */
  deferMs?: number | undefined;
}

/** A finished checkpoint of the process log (see workers/write-worker.mjs). */
export interface LogCheckpoint {
  /** `syncfs`: one `sync -f` of the runs directory; `fsync`: each file written (no `sync`). */
  method: 'syncfs' | 'fsync';
  ms: number;
  generations: number;
  files: number;
  bytes: number;
  /** When the flush failed (the logs stay for recovery). */
  code?: string;
}

interface Pending {
  request: WriteRequest;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** One write request: an atomic write through `temp`, or (`append`) an fsynced append. */
interface WriteRequest {
  id: number;
  path: string;
  temp: string;
  data: string;
  append?: true;
  log?: string;
  defer?: number;
  sync?: false;
}

/** The answer to one {@link WriteRequest}. */
interface WriteReply {
  id: number;
  code?: string;
  message?: string;
}

/** What the worker says besides batch replies. */
type WorkerNotice =
  | { checkpoint: LogCheckpoint }
  | { checkpointed: number }
  /** Deferred writes of the batch in flight whose frames are durable (answered before the rest). */
  | { durable: number[] };

/** The worker's code: plain JavaScript shipped with the package (worker threads do not get tsx's loader). */
const WORKER_PATH = join(packageRoot, 'workers', 'write-worker.mjs');

function errnoError(code: string, message: string): NodeJS.ErrnoException {
  const error = new Error(message) as NodeJS.ErrnoException;
  error.code = code;
  return error;
}

/** A write worker with its queue; see the module comment. */
export class WriteThread {
  private readonly workerPath: string;
  private readonly resourceLimits: ResourceLimits;
  private readonly maxBatch: number;
  private readonly maxBatchChars: number;
  private readonly maxRestarts: number;
  private readonly checkpointBytes: number;
  private readonly checkpointMs: number;
  /** Workers started: each numbers its log generations from `starts * 1e6` (never reused). */
  private starts = 0;
  private readonly checkpointWaiters = new Map<number, () => void>();
  private readonly checkpointListeners = new Set<(checkpoint: LogCheckpoint) => void>();
  private readonly tempPrefix = `${PROCESS_TOKEN}-w`;
  private worker: Worker | undefined;
  private broken = false;
  private answered = false;
  private deaths = 0;
  private totalDeaths = 0;
  private nextId = 0;
  private queue: Pending[] = [];
  /** The batch with the worker (or being written by the fallback); later writes wait for it. */
  private inFlight: Pending[] = [];
  private flushQueued = false;
  private readonly deathListeners = new Set<(death: WorkerDeath) => void>();

  constructor(options: WriteThreadOptions = {}) {
    this.workerPath = options.workerPath ?? WORKER_PATH;
    this.resourceLimits = options.resourceLimits ?? {
      maxYoungGenerationSizeMb: 4,
      maxOldGenerationSizeMb: 64,
    };
    this.maxBatch = options.maxBatch ?? 256;
    this.maxBatchChars = options.maxBatchChars ?? 8 * 1024 * 1024;
    this.maxRestarts = options.maxRestarts ?? 5;
    this.checkpointBytes = options.checkpointBytes ?? 16 * 1024 * 1024;
    this.checkpointMs = options.checkpointMs ?? 10_000;
  }

  /**
   * How writes are done: `worker` once a worker has answered a batch, `fallback` after
   * `maxRestarts` deaths in a row, `idle` before the first answer.
   */
  status(): 'idle' | 'worker' | 'fallback' {
    return this.broken ? 'fallback' : this.answered ? 'worker' : 'idle';
  }

  /** Workers that died since this thread was created. */
  get deathCount(): number {
    return this.totalDeaths;
  }

  /** Calls `listener` each time the worker dies. Returns the unsubscribe function. */
  onDeath(listener: (death: WorkerDeath) => void): () => void {
    this.deathListeners.add(listener);
    return () => this.deathListeners.delete(listener);
  }

  /**
   * Writes `data` to `path` atomically. Resolves once the file is in place; rejects with an
   * Error carrying the errno `code` (ENOENT, ENOSPC, ..., or {@link WORKER_DIED}).
   */
  write(path: string, data: string, options: WriteOptions = {}): Promise<void> {
    const id = this.nextId++;
    const temp = join(dirname(path), `.${basename(path)}.${this.tempPrefix}${id.toString(36)}.tmp`);
    const request: WriteRequest = { id, path, temp, data };
    if (options.log !== undefined) {
      request.log = options.log;
      if (options.deferMs !== undefined) request.defer = options.deferMs;
    } else if (options.sync === false) request.sync = false;
    return this.enqueue(request);
  }

  /** Calls `listener` after each checkpoint of the process log. Returns the unsubscribe function. */
  onCheckpoint(listener: (checkpoint: LogCheckpoint) => void): () => void {
    this.checkpointListeners.add(listener);
    return () => this.checkpointListeners.delete(listener);
  }

  /**
   * Closes the process log's open generation and makes every file written so far durable, then
   * removes the logs (a runtime shutting down leaves none). Resolves at once without a worker.
   */
  checkpoint(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return Promise.resolve();
    const id = this.nextId++;
    worker.ref();
    return new Promise((resolve) => {
      this.checkpointWaiters.set(id, resolve);
      worker.postMessage({ type: 'checkpoint', id });
    });
  }

  /**
   * Appends `data` to `path` (created if missing) and fsyncs it, in order with the writes
   * (a later write of the same batch or after is done after it). Rejects like {@link write}.
   */
  append(path: string, data: string): Promise<void> {
    return this.enqueue({ id: this.nextId++, path, temp: '', data, append: true });
  }

  private enqueue(request: WriteRequest): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Terminates the worker as a crash would: writes it held reject with {@link WORKER_DIED}, the
   * death is reported, and the next write starts a new worker (tests kill it this way).
   */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker !== undefined) await worker.terminate();
  }

  /**
   * Ends the worker for good, for an owner shutting down: no death is reported. Writes it still
   * held reject with {@link WORKER_DIED}; a write after this starts a new worker.
   */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    const lost = this.inFlight;
    this.inFlight = [];
    for (const { reject } of lost) reject(errnoError(WORKER_DIED, 'write thread stopped'));
    this.releaseCheckpointWaiters();
    if (worker !== undefined) await worker.terminate();
  }

  /**
   * Posts up to `maxBatch` waiting writes unless a batch is already out (group commit: under
   * load writes go in fewer, larger messages, each waking the worker once; when idle, at once).
   */
  private flush(): void {
    this.flushQueued = false;
    if (this.inFlight.length > 0 || this.queue.length === 0) return;
    let count = 0;
    let chars = 0;
    const queue = this.queue;
    while (count < queue.length && count < this.maxBatch) {
      chars += queue[count]!.request.data.length;
      if (count > 0 && chars > this.maxBatchChars) break;
      count++;
    }
    const batch = queue.splice(0, count);
    this.inFlight = batch;
    if (this.broken) {
      void this.writeFallback(batch);
      return;
    }
    const worker = (this.worker ??= this.start());
    worker.ref();
    worker.postMessage(batch.map((entry) => entry.request));
  }

  private async writeFallback(batch: Pending[]): Promise<void> {
    // No log here: each file is fsynced (unless `sync: false`), as before the process log.
    await Promise.all(
      batch.map(({ request, resolve, reject }) =>
        (request.append === true
          ? appendFileSynced(request.path, request.data)
          : writeFileAtomic(request.path, request.data, { sync: request.sync !== false })
        ).then(resolve, reject),
      ),
    );
    this.batchDone();
  }

  private batchDone(): void {
    this.inFlight = [];
    if (this.queue.length > 0) this.flush();
    else if (this.worker !== undefined && this.checkpointWaiters.size === 0) this.worker.unref();
  }

  private start(): Worker {
    const created = new Worker(this.workerPath, {
      resourceLimits: this.resourceLimits,
      workerData: {
        generation: this.starts++ * 1_000_000,
        checkpointBytes: this.checkpointBytes,
        checkpointMs: this.checkpointMs,
      },
    });
    let failure: Error | undefined;
    created.on('message', (message: WriteReply[] | WorkerNotice) => {
      if (!Array.isArray(message)) {
        this.notice(message);
        return;
      }
      const replies = message;
      this.answered = true;
      this.deaths = 0;
      const byId = new Map(this.inFlight.map((entry) => [entry.request.id, entry]));
      for (const reply of replies) {
        const entry = byId.get(reply.id);
        if (entry === undefined) continue;
        if (reply.code === undefined) entry.resolve();
        else entry.reject(errnoError(reply.code, reply.message ?? 'write failed'));
      }
      this.batchDone();
    });
    created.on('error', (error) => {
      failure = error;
    });
    created.on('exit', (exitCode) => {
      if (this.worker === created) this.died(exitCode, failure);
    });
    return created;
  }

  private notice(message: WorkerNotice): void {
    if ('durable' in message) {
      // The batch stays in flight (its files are being written); these writes are done.
      const ids = new Set(message.durable);
      for (const entry of this.inFlight) if (ids.has(entry.request.id)) entry.resolve();
      return;
    }
    if ('checkpoint' in message) {
      for (const listener of this.checkpointListeners) listener(message.checkpoint);
      return;
    }
    this.checkpointWaiters.get(message.checkpointed)?.();
    this.checkpointWaiters.delete(message.checkpointed);
    if (this.checkpointWaiters.size === 0 && this.inFlight.length === 0) this.worker?.unref();
  }

  /** A dead worker answers no checkpoint: its logs stay for recovery. */
  private releaseCheckpointWaiters(): void {
    for (const resolve of this.checkpointWaiters.values()) resolve();
    this.checkpointWaiters.clear();
  }

  /** The worker ended: its batch is lost (rejected, retriable), the next batch starts another. */
  private died(exitCode: number, failure: Error | undefined): void {
    this.worker = undefined;
    this.releaseCheckpointWaiters();
    this.deaths++;
    this.totalDeaths++;
    if (this.deaths >= this.maxRestarts) this.broken = true;
    const code = (failure as NodeJS.ErrnoException | undefined)?.code;
    const message = failure?.message ?? `write worker exited with code ${exitCode}`;
    const lost = this.inFlight;
    this.inFlight = [];
    for (const { reject } of lost) reject(errnoError(WORKER_DIED, `write worker died: ${message}`));
    const death: WorkerDeath = {
      exitCode,
      code,
      message,
      consecutive: this.deaths,
      restarting: !this.broken,
    };
    for (const listener of this.deathListeners) listener(death);
    if (this.queue.length > 0) this.flush();
  }
}
