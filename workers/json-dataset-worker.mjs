// Worker thread of src/eval/dataset-store.ts: parses one large JSON dataset file off the main
// thread (JSON.parse of 15 MB held the event loop for over a second) and answers its metadata and
// each sample as its own JSON text, which the main thread parses one sample at a time when asked.
// Plain JavaScript so it runs the same from the TypeScript sources and from dist/.
// Answers `{meta, texts}` or `{problem}` (never quoting the file: it may be a link to anything).
import { closeSync, openSync, readSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { parentPort, workerData } from 'node:worker_threads';

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

function readPrefix(path, size) {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function parse({ path, size }) {
  let data;
  try {
    data = JSON.parse(readPrefix(path, size));
  } catch (error) {
    const at =
      error instanceof SyntaxError ? /at position (\d+)/.exec(error.message)?.[1] : undefined;
    if (!(error instanceof SyntaxError)) throw error;
    return { problem: at === undefined ? 'not valid JSON' : `not valid JSON (at character ${at})` };
  }
  const body = Array.isArray(data) ? { samples: data } : data;
  if (!isObject(body) || !Array.isArray(body.samples)) {
    return { problem: 'expected an array of samples or an object with samples' };
  }
  const bad = body.samples.findIndex((sample) => !isObject(sample));
  if (bad >= 0) return { problem: `sample ${bad} is not an object` };
  const { name, description, compatible_workflows, input_mapping } = body;
  return {
    meta: { name, description, compatible_workflows, input_mapping },
    texts: body.samples.map((sample) => JSON.stringify(sample)),
  };
}

try {
  parentPort.postMessage(parse(workerData));
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
