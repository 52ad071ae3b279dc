/**
 * Optional retention of run files (off by default): runs started more than `days` ago, and the
 * oldest runs beyond the newest `max`, have their run file (and journal) removed and leave the
 * history index. A run that is still running is never removed, whoever runs it. Ages come from
 * the start stamp that begins every run file name, so pruning reads no file. Pruning runs after
 * the index is loaded, then every `intervalMs`, and soon after a write takes the count past
 * `max`; each prune that removes something is logged once with its count.
 */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import type { HistoryIndex } from './history.js';
import { journalFileName } from './run-journal.js';

const DAY_MS = 86_400_000;
/** `20240102T030405678Z_…`: the start stamp of a run file name. */
const STAMP = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z_/;

/** Epoch ms of a run file's start stamp, or undefined for names without one. */
export function stampOf(filename: string): number | undefined {
  const m = STAMP.exec(filename);
  if (m === null) return undefined;
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0, s = 0, ms = 0] = m.slice(1).map(Number);
  return Date.UTC(y, mo - 1, d, h, mi, s, ms);
}

export interface RetentionOptions {
  runsDir: string;
  history: Pick<HistoryIndex, 'runFiles' | 'isActiveFile' | 'remove' | 'loaded'>;
  /** Whether a run is active in this process. */
  isActive: (runId: string) => boolean;
  /** Days runs are kept (0: no age limit). */
  days: number;
  /** Runs kept (0: no count limit). */
  max: number;
  logger: Logger;
  /** @default 3600000 (an hour) */
  intervalMs?: number;
  /** @default Date.now */
  now?: () => number;
}

export interface Retention {
  /** Removes what is past the limits now; resolves with the number of runs removed. */
  prune(): Promise<number>;
  /** Called after each run-file write: prunes soon when the count is past `max`. */
  written(count: number): void;
  /** Stops the timers; resolves once a prune in progress has ended. */
  stop(): Promise<void>;
}

/** Creates the retention of a runs directory (does nothing when both limits are 0). */
export function createRetention(options: RetentionOptions): Retention {
  const { runsDir, history, days, max, logger } = options;
  const now = options.now ?? Date.now;
  const enabled = days > 0 || max > 0;
  let running: Promise<number> | undefined;
  let soon: NodeJS.Timeout | undefined;
  const timer = enabled
    ? setInterval(() => void prune(), options.intervalMs ?? 3_600_000)
    : undefined;
  timer?.unref();

  function victims(): [string, string][] {
    const files = [...history.runFiles()]
      .map(([runId, filename]) => ({ runId, filename, start: stampOf(filename) }))
      .filter((run) => run.start !== undefined)
      .sort((a, b) => a.start! - b.start!);
    const cutoff = days > 0 ? now() - days * DAY_MS : -Infinity;
    const overCount = max > 0 ? Math.max(0, files.length - max) : 0;
    const out: [string, string][] = [];
    for (let i = 0; i < files.length; i++) {
      const run = files[i]!;
      if (i >= overCount && run.start! >= cutoff) break;
      if (history.isActiveFile(run.filename) || options.isActive(run.runId)) continue;
      out.push([run.runId, run.filename]);
    }
    return out;
  }

  async function pruneOnce(): Promise<number> {
    if (!history.loaded) return 0;
    let removed = 0;
    for (const [runId, filename] of victims()) {
      try {
        await unlink(join(runsDir, filename));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          logger.warn(
            { file: filename, code: (error as NodeJS.ErrnoException).code },
            'cannot remove an old run file',
          );
          continue;
        }
      }
      await unlink(join(runsDir, journalFileName(filename))).catch(() => undefined);
      history.remove(runId, filename);
      removed++;
    }
    if (removed > 0) logger.info({ removed, days, max }, 'old run files removed (retention)');
    return removed;
  }

  function prune(): Promise<number> {
    if (!enabled) return Promise.resolve(0);
    running ??= pruneOnce()
      .catch((error: unknown) => {
        logger.warn({ err: String(error) }, 'run retention failed');
        return 0;
      })
      .finally(() => (running = undefined));
    return running;
  }

  return {
    prune,
    written(count) {
      if (max === 0 || count <= max || soon !== undefined) return;
      soon = setTimeout(() => {
        soon = undefined;
        void prune();
      }, 1000);
      soon.unref();
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      if (soon !== undefined) clearTimeout(soon);
      await running;
    },
  };
}
