/**
 * Owners of run files. Every persisting runtime holds an owner lease on its runs directory: a
 * file `.<owner id>.owner` naming the process (pid, host, process start time) and its lease time,
 * whose mtime is refreshed three times per lease, removed at shutdown. Each `running` record
 * carries its runtime's owner id, so recovery (at start-up, and by the orphan watch while the
 * service runs) touches only the runs whose owner is gone, never those of another live process
 * sharing the directory (an `agentic run` beside the service).
 *
 * An owner is alive when its owner file exists and:
 * - on the same machine (same host name, boot id and pid namespace): its pid is alive, is not a
 *   zombie (killed, not yet reaped by its parent: /proc/<pid>/stat state `Z` or `X`), still has
 *   the recorded process start time (a reused pid has another one), and its lease is fresh: the
 *   file's mtime is at most its lease time old (this also catches a pid reused with the same
 *   start time, as in a restarted container, and a process stopped that long);
 * - on another pid namespace of the same kernel (a restarted container): its lease is fresh;
 * - on another machine (a runs directory shared over NFS): its lease is fresh within
 *   `max(60 s, 2 × lease)`, for the hosts' clocks; this assumes they agree within that margin
 *   and the NFS attribute cache is shorter than it.
 * A process paused longer than its lease (SIGSTOP, a suspended VM) counts as gone.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { newOwnerId } from '../files/process-token.js';

/** Owner files: `.<owner id>.owner`. */
export const OWNER_FILE = /^\.([0-9a-z]+-[0-9a-f]{8}-[0-9a-z]+)\.owner$/;

/** What an owner file holds. */
export interface OwnerInfo {
  id: string;
  pid: number;
  /** Host name, boot id and pid namespace: pids compare only within one machine. */
  machine: string;
  /** The process start time (clock ticks after boot, /proc/<pid>/stat), or null. */
  procStart: string | null;
  heartbeatMs: number;
  /** How long the owner may go without refreshing its file and still count as alive (ms). */
  leaseMs?: number;
}

/** The default lease time of an owner file (ms): three heartbeats of 10 s. */
export const DEFAULT_OWNER_LEASE_MS = 30_000;
/** Heartbeats per lease: a lease survives two missed refreshes. */
const HEARTBEATS_PER_LEASE = 3;

/** The owner file name of an owner id. */
export function ownerFileName(id: string): string {
  return `.${id}.owner`;
}

function readQuietly(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return ''; // not Linux, or /proc not mounted: that part of the identity is unknown
  }
}

/** This machine's identity: host name, boot id, pid namespace. */
function machineId(): string {
  const boot = readQuietly(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
  const pidNs = readQuietly(() => readlinkSync('/proc/self/ns/pid'));
  return `${hostname()}|${boot}|${pidNs}`;
}

/** State (field 3) and start time (field 22) of /proc/<pid>/stat; null where unknown. */
function processStat(pid: number): { state: string | null; start: string | null } {
  const stat = readQuietly(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return {
    state: state !== undefined && /^[A-Za-z]$/.test(state) ? state : null,
    start: start !== undefined && /^[0-9]+$/.test(start) ? start : null,
  };
}

/** The start time of process `pid` (field 22 of /proc/<pid>/stat), or null when unknown. */
export function processStartTime(pid: number): string | null {
  return processStat(pid).start;
}

/**
 * Whether `pid` is a zombie (`Z`: exited, not yet reaped by its parent) or dying (`X`): such a
 * process still answers `kill(pid, 0)` and keeps its start time, but runs nothing.
 */
export function processDead(pid: number): boolean {
  const { state } = processStat(pid);
  return state === 'Z' || state === 'X';
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lease of an owner file; files of older versions (no lease) had `max(60 s, 6 beats)`. */
export function leaseOf(info: OwnerInfo): number {
  return info.leaseMs ?? Math.max(60_000, 6 * info.heartbeatMs);
}

/** Whether the owner described by `info` (its file last touched at `mtimeMs`) is alive. */
export function ownerAlive(info: OwnerInfo, mtimeMs: number, now: number): boolean {
  const here = machineId();
  const lease = leaseOf(info);
  const age = now - mtimeMs;
  // A machine id without boot id (not Linux) is only a host name: pids may still be compared.
  if (info.machine === here) {
    if (!pidAlive(info.pid)) return false;
    const { state, start } = processStat(info.pid);
    if (state === 'Z' || state === 'X') return false;
    if (info.procStart !== null && start !== null && start !== info.procStart) return false;
    return age <= lease;
  }
  // Another pid namespace of this kernel (a restarted container) shares this clock.
  const boot = info.machine.split('|')[1] ?? '';
  if (boot !== '' && boot === here.split('|')[1]) return age <= lease;
  return age <= Math.max(60_000, 2 * lease);
}

/** A runtime's owner lease on a runs directory. */
export interface OwnerLease {
  readonly id: string;
  /**
   * Stops the heartbeat and removes the owner file; with `keep`, leaves the file (runs whose
   * end records were not written still name this owner: once the process is gone, the next
   * scan of any process recovers them).
   */
  release(options?: { keep?: boolean }): Promise<void>;
}

export interface OwnerLeaseOptions {
  runsDir: string;
  logger: Logger;
  /**
   * How long the owner file may go unrefreshed before others count this owner as gone; it is
   * refreshed three times per lease. @default 30000
   */
  leaseMs?: number;
}

/** Writes this runtime's owner file and starts its heartbeat (an unref'd timer). */
export async function acquireOwnerLease(options: OwnerLeaseOptions): Promise<OwnerLease> {
  const { runsDir, logger } = options;
  const leaseMs = options.leaseMs ?? DEFAULT_OWNER_LEASE_MS;
  const heartbeatMs = Math.max(1, Math.floor(leaseMs / HEARTBEATS_PER_LEASE));
  const id = newOwnerId();
  const path = join(runsDir, ownerFileName(id));
  const info: OwnerInfo = {
    id,
    pid: process.pid,
    machine: machineId(),
    procStart: processStartTime(process.pid),
    heartbeatMs,
    leaseMs,
  };
  const text = `${JSON.stringify(info)}\n`;
  await writeFile(path, text, { mode: 0o644 });
  let released = false;
  let warned = false;
  const timer = setInterval(() => {
    const at = new Date();
    // A file removed meanwhile (by hand, or by a process that thought us gone) is written again.
    utimes(path, at, at)
      .catch(() => (released ? undefined : writeFile(path, text, { mode: 0o644 })))
      .catch((error: unknown) => {
        if (warned) return;
        warned = true;
        logger.warn(
          { code: (error as NodeJS.ErrnoException).code },
          'cannot refresh the owner file in the runs directory; another process may recover our runs',
        );
      });
  }, heartbeatMs);
  timer.unref();
  return {
    id,
    async release({ keep = false } = {}) {
      released = true;
      clearInterval(timer);
      if (!keep) await unlink(path).catch(() => undefined);
    },
  };
}
