// Worker thread of src/store/write-thread.ts. Plain JavaScript so it runs the same from the
// TypeScript sources and from dist/.
//
// A batch is an array of requests, answered with one array of replies (`{id}`, or
// `{id, code, message}` with the temp file removed):
// - `{path, temp, data}`: written to `temp`, fsynced, renamed over `path` (readers see the old
//   content or the new, never a partial file; a rename is never made durable before its data);
// - the same with `log` (`<runs dir>/.<owner id>`): the process log's group commit. The data of
//   every such request of the batch is appended to the log `<log>.<generation>.log` as one frame
//   each (`@<bytes> <file name>\n` then the file's text) with ONE write and ONE fdatasync for the
//   whole batch; then each file is written to its temp name and renamed WITHOUT an fsync. A
//   record is durable once its batch's fdatasync returned (recovery rebuilds a file from the log,
//   src/store/process-log.ts). A failed append is cut back off the log (or the generation is
//   given up) and fails every logged request of the batch;
// - the same with `defer` (ms; a run's first record): answered once the log is fdatasynced, its
//   file written only `defer` ms later, and not at all when a later write of the same file came
//   meanwhile (a run that ended by then: its end record says more). Most runs are shorter: their
//   start record costs no file creation and rename. A deferred write that fails is tried again
//   at the next turn (the record is durable in the log meanwhile), and a generation is not
//   removed while deferred writes are pending;
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

/** The open generation: `{base, path, fd, size, openedAt, paths}`, or undefined. */
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
  const fd = openSync(path, 'a', 0o644);
  log = { base, path, dir: dirname(base), fd, size: 0, openedAt: Date.now(), paths: new Set() };
  return log;
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
    let written = 0;
    while (written < frames.length) {
      written += writeSync(current.fd, frames, written, frames.length - written);
    }
    fdatasyncSync(current.fd);
  } catch (error) {
    // A frame cut short would hide every later frame from recovery: cut it off, or give the
    // generation up (its complete frames are still read) and start another.
    try {
      ftruncateSync(current.fd, current.size);
    } catch {
      closeLog();
    }
    return error;
  }
  current.size += frames.length;
  for (const request of requests) current.paths.add(request.path);
  return undefined;
}

function writeFile(request, body, sync) {
  try {
    const fd = openSync(request.temp, 'w', 0o644);
    try {
      writeSync(fd, body);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(request.temp, request.path);
    return { id: request.id };
  } catch (error) {
    removeQuietly(request.temp);
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
    return;
  }
  if (message.type === 'checkpoint') {
    void checkpoint(true).then(() => parentPort.postMessage({ checkpointed: message.id }));
  }
});
