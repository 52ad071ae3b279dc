import { readFileSync } from 'node:fs';

/**
 * The calling thread's CPU time and its time waiting for a core (run queue), in ms, from
 * /proc/thread-self/schedstat (Linux; undefined elsewhere). Called on the main thread, it
 * separates the service's own work from the time the OS gave other threads and processes.
 */
export function mainThreadSched(): { cpu: number; queued: number } | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ');
    return { cpu: Number(run) / 1e6, queued: Number(wait) / 1e6 };
  } catch {
    return undefined;
  }
}
