// Worker thread of src/store/write-thread.ts: writes each requested file to its temp name,
// fsyncs it, then renames it over the target (readers see the old content or the new, never a
// partial file, and a rename is never made durable before the data it points to).
// Plain JavaScript so it runs the same from the TypeScript sources and from dist/.
// Requests with `append: true` are appended to their file and fsynced instead (run journals).
// Replies are `{id}`, or `{id, code, message}` with the temp file removed.
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

function removeQuietly(path) {
  try {
    unlinkSync(path);
  } catch {
    // The temp file was never created or is already gone: nothing to clean up.
  }
}

function writeSynced(path, data) {
  const fd = openSync(path, 'w', 0o644);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function append(request) {
  const fd = openSync(request.path, 'a', 0o644);
  try {
    writeFileSync(fd, request.data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function write(request) {
  if (request.append === true) {
    try {
      append(request);
      return { id: request.id };
    } catch (error) {
      return { id: request.id, code: error.code ?? 'EIO', message: String(error.message) };
    }
  }
  try {
    writeSynced(request.temp, request.data);
    renameSync(request.temp, request.path);
    return { id: request.id };
  } catch (error) {
    removeQuietly(request.temp);
    return { id: request.id, code: error.code ?? 'EIO', message: String(error.message) };
  }
}

parentPort.on('message', (requests) => parentPort.postMessage(requests.map(write)));
