/**
 * The orphan watch: while a runtime runs, it looks at the owner files of its runs directory every
 * `everyMs` and, when another owner is gone (owner.ts: its process dead or a zombie, or its lease
 * not refreshed in time), has that owner's runs recovered (marked interrupted, as at start-up).
 * Without it a process killed and restarted at once (its old self still a zombie, or its pid
 * still looking alive) left its runs `running` forever: the start-up scan runs once.
 *
 * Each look costs one `readdir` and a read of each owner file; run files are read only when an
 * owner is found gone. Owner files that vanish (a clean shutdown) are not a death: a clean
 * shutdown leaves no run `running`, and one that had to leave some keeps its file.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { OWNER_FILE, ownerAlive, type OwnerInfo } from './owner.js';

/** An unreadable owner file (being written, or damaged) is judged once this old. */
const UNREADABLE_OWNER_AGE_MS = 60_000;

export interface OrphanWatchOptions {
  runsDir: string;
  /** This runtime's owner id: never gone to itself. */
  self: string;
  /** Time between looks (ms); the runtime uses a third of the lease. */
  everyMs: number;
  /** Recovers the runs of the owners found gone (and removes their owner files). */
  recover(gone: ReadonlySet<string>): Promise<void>;
  logger: Logger;
}

export interface OrphanWatch {
  /** Stops looking; resolves once a recovery in progress has ended. */
  stop(): Promise<void>;
}

/** Whether owner file `name` names an owner that is gone; undefined when it cannot tell. */
async function ownerGone(dir: string, name: string): Promise<boolean | undefined> {
  const path = join(dir, name);
  try {
    const info = await stat(path);
    const now = Date.now();
    try {
      const owner = JSON.parse(await readFile(path, 'utf8')) as OwnerInfo;
      return !ownerAlive(owner, info.mtimeMs, now);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return now - info.mtimeMs > UNREADABLE_OWNER_AGE_MS ? true : undefined;
    }
  } catch {
    return undefined; // removed meanwhile: its owner shut down
  }
}

/** The owners of `dir` other than `self` that are gone. */
export async function goneOwners(dir: string, self: string): Promise<Set<string>> {
  const gone = new Set<string>();
  for (const name of await readdir(dir)) {
    const id = OWNER_FILE.exec(name)?.[1];
    if (id === undefined || id === self) continue;
    if ((await ownerGone(dir, name)) === true) gone.add(id);
  }
  return gone;
}

/** Starts the watch (an unref'd timer: it never keeps a process alive). */
export function startOrphanWatch(options: OrphanWatchOptions): OrphanWatch {
  const { runsDir, self, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<void> | undefined;
  let warned = false;

  async function look(): Promise<void> {
    const gone = await goneOwners(runsDir, self);
    if (gone.size > 0 && !stopped) await options.recover(gone);
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      looking = look()
        .catch((error: unknown) => {
          if (warned) return;
          warned = true;
          logger.warn(
            { code: (error as NodeJS.ErrnoException).code },
            'cannot look for gone owners in the runs directory; their runs stay running until a restart',
          );
        })
        .finally(() => {
          looking = undefined;
          schedule();
        });
    }, options.everyMs);
    timer.unref();
  }

  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await looking;
    },
  };
}
