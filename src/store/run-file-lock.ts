/**
 * One repair at a time per run file in this process. The start-up scan, the orphan watch and
 * the scale-out finaliser each mark the runs of dead owners interrupted: read the file, fold
 * its journal, write the file, remove the journal. Two of them on one file at once (a worker's
 * finaliser and its orphan watch, both woken by the same killed worker) wrote it twice, and the
 * second could write the start record without the journal's steps, the first having removed
 * the journal. Each repair reads the file inside the lock, so the second sees the first's
 * record and leaves it. (Other processes are kept apart by the owner lease and the claims.)
 */
const locks = new Map<string, Promise<void>>();

/** Runs `repair` once no other repair of `path` (an absolute run-file path) is in progress. */
export async function withRunFileLock<T>(path: string, repair: () => Promise<T>): Promise<T> {
  const previous = locks.get(path);
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = (previous ?? Promise.resolve()).then(() => mine);
  locks.set(path, tail);
  try {
    await previous;
    return await repair();
  } finally {
    release();
    if (locks.get(path) === tail) locks.delete(path);
  }
}
