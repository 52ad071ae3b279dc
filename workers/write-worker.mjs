// Worker thread of src/store/write-thread.ts. Plain JavaScript so it runs the same from the
// TypeScript sources and from dist/.
//
// A batch is an array of requests, answered with one array of replies (`{id}`, or
// `{id, code, message}` with the temp file removed):
// - `{path, temp, data}`: written to `temp`, fsynced, renamed over `path` (readers see the old
//   content or the new, never a partial file; a rename is never made durable before its data);
// - the same with `log` (`<runs dir>/.<owner id>`): the process log's group commit. The data of
//   every such request of the batch is appended to the log `<log>.<generation>.log` as one frame
//   each (`@<bytes> <file name>\n` then the file's text) with ONE write (over zeros written
//   ahead, see `reserve`) and ONE fdatasync for the whole batch; then each file is written to
//   its temp name and renamed WITHOUT an fsync. A record is durable once its batch's fdatasync
//   returned (recovery rebuilds a file from the log, src/store/process-log.ts). A failed append
//   is cut back off the log (or the generation is given up) and fails every logged request of
//   the batch;
// - the same with `defer` (ms; a run's first record): answered once the log is fdatasynced (in
//   a message `{durable: [id, ...]}` of its own, before the batch's files are written), its file
//   written only `defer` ms later, and not at all when a later write of the same file came
//   meanwhile (a run that ended by then: its end record says more). Most runs are shorter: their
//   start record costs no file creation and rename. Once the batch is answered, the run's temp
//   file is created ahead for its next write (see `spares`). A deferred write that fails is
//   tried again at the next turn (the record is durable in the log meanwhile), and a generation
//   is not removed while deferred writes are pending;
// - `sync: false`: written without any fsync (AGENTIC_WRITE_SYNC=off);
// - `append: true`: appended to `path` and fsynced (run journals).
//
// The log is bounded by checkpoints: once a generation holds `checkpointBytes` or is
// `checkpointMs` old it is closed (later batches go to a new generation) and, once the file
// system has flushed everything written so far (`sync -f <runs dir>`: one syncfs(2), ~40-130 ms
// on ext4 here, however many files; an fsync of each file cost 430 us even once clean), removed;
// up to 64 files are fsynced one by one instead.
// Without `sync` (not Linux coreutils) each file of the generation is fsynced instead. `{type:
// 'checkpoint', id}` closes and flushes the current generation at once (a runtime shutting down)
// and is answered `{checkpointed: id}`; each finished checkpoint is reported as `{checkpoint}`.
import { execFile } from 'node:child_process';
import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { Buffer } from 'node:buffer';
import { basename, dirname } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';

const settings = workerData ?? {};
/** Generation numbers of this worker start here: a restarted worker never reuses a log file. */
let nextGeneration = settings.generation ?? 0;
const checkpointBytes = settings.checkpointBytes ?? 16 * 1024 * 1024;
const checkpointMs = settings.checkpointMs ?? 10_000;
/** Up to this many files written since the last checkpoint are fsynced one by one instead. */
const FEW_FILES = 64;
/** The log's end is written ahead with zeros in chunks from PREALLOC_MIN doubling to PREALLOC_MAX. */
const PREALLOC_MIN = 64 * 1024;
const PREALLOC_MAX = 1024 * 1024;
/** PREALLOC_MAX zero bytes (see reserve), made on first use. */
let zeros;

/**
 * The open generation: `{base, path, fd, size, allocated, openedAt, paths}` (`size`: bytes of
 * frames; `allocated`: bytes written, the zeros after the frames included), or undefined.
 */
let log;
/** Closed generations whose files are not known to be durable yet (flushed by the next checkpoint). */
const closed = [];
/** The checkpoint in progress (a promise), if any. */
let flushing;
let timer;
/** Deferred first-record writes by path: `{request, body, due}`, in request order. */
const deferred = new Map();
let deferTimer;
let deferFailures = 0;

function removeQuietly(path) {
  try {
    unlinkSync(path);
  } catch {
    // Never created, or already gone: nothing to clean up.
  }
}

function failure(request, error) {
  return { id: request.id, code: error.code ?? 'EIO', message: String(error.message) };
}

function openLog(base) {
  if (log !== undefined && log.base !== base) closeLog();
  if (log !== undefined) return log;
  const path = `${base}.${nextGeneration++}.log`;
  // Not O_APPEND: frames are written at their offset, over the zeros written ahead (below).
  const fd = openSync(path, 'wx', 0o644);
  log = {
    base,
    path,
    dir: dirname(base),
    fd,
    size: 0,
    allocated: 0,
    openedAt: Date.now(),
    paths: new Set(),
  };
  return log;
}

/**
 * Makes room for `bytes` more of frames: the log's end is written ahead with zeros, in chunks
 * of 64 KiB doubling up to 1 MiB, made durable by the fdatasync of the batch that needed them.
 * Why: an fdatasync of an append changes the file's size, so on ext4 (any journaling file
 * system) it waits for a commit of the journal, which holds every other metadata change of the
 * machine (our own run files' creations and renames among them). Frames written over blocks
 * already allocated and on disk change no metadata that fdatasync must keep (only the mtime),
 * so it is the data write and a disk flush alone (measured in
 * docs/benchmarks.md#durable-writes). Databases keep their write-ahead logs preallocated for
 * the same reason. Readers stop at the zeros (store/process-log.ts).
 */
function reserve(current, bytes) {
  if (current.size + bytes <= current.allocated) return;
  const chunk = Math.min(PREALLOC_MAX, Math.max(PREALLOC_MIN, current.allocated));
  const target = current.size + bytes + chunk;
  zeros ??= Buffer.alloc(PREALLOC_MAX);
  let at = current.allocated;
  while (at < target) {
    at += writeSync(current.fd, zeros, 0, Math.min(zeros.length, target - at), at);
  }
  current.allocated = at;
}

function closeLog() {
  if (log === undefined) return;
  // The generation's files must all be written before it is flushed and removed.
  if (deferred.size > 0) writeDeferred(true);
  try {
    closeSync(log.fd);
  } catch {
    // A close error loses nothing: every frame was fdatasynced.
  }
  if (log.size > 0) closed.push(log);
  else removeQuietly(log.path);
  log = undefined;
}

/**
 * Appends one frame per logged request and fdatasyncs once. Returns the error, or undefined.
 * `bodies` are the requests' data as bytes (written to their temp files too).
 */
function appendFrames(requests, bodies) {
  let current;
  try {
    current = openLog(requests[0].log);
  } catch (error) {
    return error;
  }
  const parts = [];
  for (let i = 0; i < requests.length; i++) {
    parts.push(Buffer.from(`@${bodies[i].length} ${basename(requests[i].path)}\n`), bodies[i]);
  }
  const frames = Buffer.concat(parts);
  try {
    reserve(current, frames.length);
    let written = 0;
    while (written < frames.length) {
      written += writeSync(
        current.fd,
        frames,
        written,
        frames.length - written,
        current.size + written,
      );
    }
    fdatasyncSync(current.fd);
  } catch (error) {
    // A frame cut short would hide every later frame from recovery: cut it off, or give the
    // generation up (its complete frames are still read) and start another.
    try {
      ftruncateSync(current.fd, current.size);
      current.allocated = current.size;
    } catch {
      closeLog();
    }
    return error;
  }
  current.size += frames.length;
  for (const request of requests) current.paths.add(request.path);
  return undefined;
}

/**
 * Empty temp files made ahead for runs' next records, by run file path: a run's first record is
 * deferred, and once the batch is answered its temp file is created, so the run's end record
 * (or the deferred write) only opens, writes and renames it. Creating a file is most of a run
 * file's cost on ext4 (0.2-1.6 ms on a busy journal: a new inode and directory entry; the write
 * and the rename 0.01-0.05 ms each, measured in docs/benchmarks.md#durable-writes); made here,
 * while the main thread runs the run, it is off the path from the run's end to its `done`.
 * Readers never see them (temp names); a spare left by a run that never wrote again is removed
 * with the process's other temp files (store/stale-temp-files.ts).
 */
const spares = new Map();
/** Deferred writes of the batch just answered, whose spares are made next. */
let sparesToMake = [];

function makeSpares() {
  const requests = sparesToMake;
  sparesToMake = [];
  for (const request of requests) {
    // Ended in the same batch, or already has one.
    if (deferred.get(request.path)?.request !== request || spares.has(request.path)) continue;
    try {
      closeSync(openSync(request.temp, 'wx', 0o644));
      spares.set(request.path, request.temp);
    } catch {
      // Made at write time instead.
    }
  }
}

function writeFile(request, body, sync) {
  const spare = spares.get(request.path);
  spares.delete(request.path);
  const temp = spare ?? request.temp;
  try {
    // A spare is empty and ours: opened without O_CREAT or O_TRUNC.
    const fd = openSync(temp, spare === undefined ? 'w' : 'r+', 0o644);
    try {
      writeSync(fd, body);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, request.path);
    return { id: request.id };
  } catch (error) {
    removeQuietly(temp);
    return failure(request, error);
  }
}

function append(request) {
  try {
    const fd = openSync(request.path, 'a', 0o644);
    try {
      writeSync(fd, request.data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { id: request.id };
  } catch (error) {
    return failure(request, error);
  }
}

function writeBatch(requests) {
  const logged = [];
  const bodies = new Map();
  for (const request of requests) {
    if (request.append === true) continue;
    const body = Buffer.from(request.data);
    bodies.set(request.id, body);
    if (request.log !== undefined) logged.push(request);
  }
  let logError;
  if (logged.length > 0) {
    logError = appendFrames(
      logged,
      logged.map((request) => bodies.get(request.id)),
    );
  }
  // A deferred write (a run's first record) is done once its frame is durable: answered now,
  // not after the batch's files are created (0.2-1.6 ms each on a busy ext4 journal), so that
  // `POST /api/run` does not wait for other runs' end-record files (docs/benchmarks.md).
  // Only when the batch has more to write (otherwise its answer follows at once: one message).
  if (logError === undefined) {
    const durable = logged.filter((request) => request.defer !== undefined);
    if (durable.length > 0 && durable.length < requests.length) {
      parentPort.postMessage({ durable: durable.map(({ id }) => id) });
    }
  }
  const replies = requests.map((request) => {
    if (request.append === true) return append(request);
    if (request.log !== undefined) {
      if (logError !== undefined) return failure(request, logError);
      if (request.defer !== undefined) {
        deferred.delete(request.path);
        deferred.set(request.path, {
          request,
          body: bodies.get(request.id),
          due: Date.now() + request.defer,
          generation: log,
        });
        armDeferred();
        sparesToMake.push(request);
        return { id: request.id };
      }
    }
    const reply = writeFile(
      request,
      bodies.get(request.id),
      request.sync !== false && request.log === undefined,
    );
    // A later write of the file supersedes a deferred one (the same file's writes keep order);
    // one that failed does not (it is retried, and the file keeps the first record meanwhile).
    if (reply.code === undefined) deferred.delete(request.path);
    return reply;
  });
  considerCheckpoint();
  return replies;
}

/** Writes the deferred writes that are due (all with `all`); failures stay for the next turn. */
function writeDeferred(all) {
  const now = Date.now();
  let failed = 0;
  for (const [path, entry] of deferred) {
    if (!all && entry.due > now) break;
    const reply = writeFile(entry.request, entry.body, false);
    if (reply.code === undefined) deferred.delete(path);
    else failed++;
  }
  deferFailures = failed > 0 ? deferFailures + 1 : 0;
  armDeferred();
}

function armDeferred() {
  if (deferTimer !== undefined || deferred.size === 0) return;
  const first = deferred.values().next().value;
  // After failures, back off (100 ms doubling, at most 5 s) as the run-file queue does.
  const backoff = deferFailures === 0 ? 0 : Math.min(5000, 100 * 2 ** (deferFailures - 1));
  deferTimer = setTimeout(
    () => {
      deferTimer = undefined;
      writeDeferred(false);
    },
    Math.max(backoff, first.due - Date.now()),
  );
}

function syncfs(dir) {
  return new Promise((resolve, reject) => {
    execFile('sync', ['-f', dir], { timeout: 120_000 }, (error) =>
      error === null ? resolve() : reject(error),
    );
  });
}

function fsyncPath(path, flags) {
  let fd;
  try {
    fd = openSync(path, flags);
  } catch (error) {
    if (error.code === 'ENOENT') return; // removed since (retention, a later rename): nothing to keep
    throw error;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes every file written into the closed generations durable, then removes their logs. */
async function flushClosed() {
  const generations = closed.splice(0);
  if (generations.length === 0) return;
  const started = Date.now();
  const dirs = new Set(generations.map((generation) => generation.dir));
  const written = generations.reduce((sum, generation) => sum + generation.paths.size, 0);
  // A few files (a CLI run, a quiet service) are fsynced one by one (0.5 ms each) rather than
  // flushing the whole file system with everyone's dirty data.
  let method = written <= FEW_FILES ? 'fsync' : 'syncfs';
  let error;
  for (const dir of method === 'syncfs' ? dirs : []) {
    try {
      await syncfs(dir);
    } catch {
      method = 'fsync';
    }
  }
  if (method === 'fsync') {
    try {
      for (const generation of generations) {
        for (const path of generation.paths) fsyncPath(path, 'r');
      }
      for (const dir of dirs) fsyncPath(dir, 'r');
    } catch (caught) {
      error = caught;
    }
  }
  let files = 0;
  let bytes = 0;
  // Deferred writes of these generations that keep failing: their records are only in the log,
  // which stays.
  const flushed = new Set(generations);
  for (const entry of deferred.values()) {
    if (error === undefined && flushed.has(entry.generation)) error = { code: 'EDEFERRED' };
  }
  for (const generation of generations) {
    files += generation.paths.size;
    bytes += generation.size;
    // Not flushed: the log stays, and recovery replays it once this process is gone.
    if (error === undefined) removeQuietly(generation.path);
  }
  parentPort.postMessage({
    checkpoint: {
      method,
      ms: Date.now() - started,
      generations: generations.length,
      files,
      bytes,
      ...(error === undefined ? {} : { code: error.code ?? 'EIO' }),
    },
  });
}

/** Runs a checkpoint after the one in progress (if any); `force` closes the open generation. */
function checkpoint(force) {
  const previous = flushing ?? Promise.resolve();
  const next = previous
    .then(() => {
      if (force) closeLog();
      return flushClosed();
    })
    .catch(() => undefined);
  flushing = next.finally(() => {
    if (flushing === current) flushing = undefined;
    considerCheckpoint();
  });
  const current = flushing;
  return current;
}

function considerCheckpoint() {
  if (log === undefined || log.size === 0) return;
  const age = Date.now() - log.openedAt;
  if (log.size < checkpointBytes && age < checkpointMs) {
    // One timer per generation (not one per batch).
    timer ??= setTimeout(() => {
      timer = undefined;
      considerCheckpoint();
    }, checkpointMs - age);
    return;
  }
  // One checkpoint at a time: meanwhile the open generation grows past its bound.
  if (flushing !== undefined) return;
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  closeLog();
  void checkpoint(false);
}

parentPort.on('message', (message) => {
  if (Array.isArray(message)) {
    parentPort.postMessage(writeBatch(message));
    // After the answer: the main thread runs the runs meanwhile (see `spares`).
    makeSpares();
    return;
  }
  if (message.type === 'checkpoint') {
    void checkpoint(true).then(() => parentPort.postMessage({ checkpointed: message.id }));
  }
});
