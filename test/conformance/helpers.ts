import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import runRecordSchema from '../../schemas/run-record.schema.json' with { type: 'json' };
import eventsSchema from '../../schemas/events.schema.json' with { type: 'json' };
import type { RunRecord, WorkflowEvent } from '../../src/engine/types.js';

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
export const validateRecord = ajv.compile<RunRecord>(runRecordSchema);
export const validateEvent = ajv.compile<WorkflowEvent>(eventsSchema);

/** `type` or `type:step` (or `type:step=status`) of each event, for exact-sequence assertions. */
export function sequence(events: readonly WorkflowEvent[], withStatus = false): string[] {
  return events.map((event) => {
    const step = 'step' in event ? `:${event.step}` : '';
    const status = withStatus && 'status' in event ? `=${event.status}` : '';
    return `${event.type}${step}${status}`;
  });
}

export async function tempDir(prefix = 'agentic-conf-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Every run file in a directory, parsed. */
export async function runFiles(dir: string): Promise<{ name: string; record: RunRecord }[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort();
  return Promise.all(
    names.map(async (name) => ({
      name,
      record: JSON.parse(await readFile(join(dir, name), 'utf8')) as RunRecord,
    })),
  );
}

/** Where the conformance tests' clock starts: a fixed instant (epoch ms). */
export const CLOCK_START = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

/** Resolves with the first event that matches, from a runtime-wide subscription. */
export function nextEvent(
  subscribe: (listener: (event: WorkflowEvent) => void) => () => void,
  match: (event: WorkflowEvent) => boolean,
): Promise<WorkflowEvent> {
  return new Promise((resolve) => {
    const stop = subscribe((event) => {
      if (!match(event)) return;
      stop();
      resolve(event);
    });
  });
}
