/**
 * Keeps this process's history index in step with runs written by other processes: it follows
 * the record stream (`<prefix>:runs:records`, one notification per run-file write, see
 * run-publisher.ts) and re-reads each notified file from the shared runs directory, so
 * `GET /api/runs` and the summary agree on every instance without a restart or directory
 * polling. Its own notifications are skipped (its runtime indexed them already).
 */
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { HistoryIndex } from '../store/history.js';
import type { ScaleKeys } from './keys.js';
import { RECORD_FIELDS } from './run-publisher.js';
import type { StreamEntries, StreamReader } from './stream-reader.js';

export interface HistoryFeedOptions {
  reader: StreamReader;
  keys: ScaleKeys;
  /** This process's id (its own notifications are skipped). */
  instanceId: string;
  history: Pick<HistoryIndex, 'refresh'>;
  logger: Logger;
  /** The record-stream id to follow from (notifications after it). @default `$`-like: 0-0 */
  fromId?: string;
  /** Called after each notified file was indexed (tests, metrics). */
  onIndexed?: (filename: string) => void;
}

function field(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** Starts following; returns the function that stops it. */
export function followRunRecords(options: HistoryFeedOptions): () => void {
  const { history, logger } = options;
  // One read at a time per file: two notifications of one run (start, end) read concurrently
  // could resolve out of order and leave the older content indexed.
  const chains = new Map<string, Promise<void>>();

  const refresh = (filename: string): void => {
    const previous = chains.get(filename) ?? Promise.resolve();
    const next = previous
      .then(() => history.refresh(filename))
      .then(
        (found) => {
          if (found) options.onIndexed?.(filename);
          else logger.debug({ filename }, 'notified run file not found in the runs directory');
        },
        (error: unknown) => {
          logger.warn({ filename, err: errorMessage(error) }, 'notified run file unreadable');
        },
      )
      .finally(() => {
        if (chains.get(filename) === next) chains.delete(filename);
      });
    chains.set(filename, next);
  };

  const onEntries = (entries: StreamEntries): void => {
    for (const [, fields] of entries) {
      if (field(fields, RECORD_FIELDS.instance) === options.instanceId) continue;
      const filename = field(fields, RECORD_FIELDS.filename);
      if (filename !== undefined) refresh(filename);
    }
  };

  return options.reader.follow(options.keys.records, options.fromId ?? '0-0', onEntries);
}
