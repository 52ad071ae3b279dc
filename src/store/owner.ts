/**
 * Owners of run files. Every persisting runtime holds an owner lease on its runs directory: a
 * file `.<owner id>.owner` naming the process (pid, host, process start time) whose mtime is
 * refreshed every `heartbeatMs`, removed at shutdown. Each `running` record carries its
 * runtime's owner id, so start-up recovery touches only the runs whose owner is gone, never
 * those of another live process sharing the directory (an `agentic run` beside the service).
 *
 * An owner is alive when its owner file exists and:
 * - on the same machine (same host name, boot id and pid namespace): its pid is alive and
 *   still has the recorded process start time (a reused pid has another one); where the start
 *   time cannot be read (not Linux), the heartbeat decides, as below;
 * - on another machine (a runs directory shared over NFS): its heartbeat is fresh, i.e. the
 *   file's mtime is less than `max(60 s, 6 × heartbeatMs)` old. This assumes the hosts' clocks
 *   agree within that margin and the NFS attribute cache is shorter than it; a process paused
 *   longer than that (SIGSTOP, a suspended VM) counts as gone.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { newOwnerId } from './process-token.js';

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
}

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

/** The start time of process `pid` (field 22 of /proc/<pid>/stat), or null when unknown. */
export function processStartTime(pid: number): string | null {
  const stat = readQuietly(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return start !== undefined && /^[0-9]+$/.test(start) ? start : null;
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

/** Whether the owner described by `info` (its file last touched at `mtimeMs`) is alive. */
export function ownerAlive(info: OwnerInfo, mtimeMs: number, now: number): boolean {
  const here = machineId();
  // A machine id without boot id (not Linux) is only a host name: pids may still be compared.
  if (info.machine === here) {
    if (!pidAlive(info.pid)) return false;
    if (info.procStart !== null) {
      const current = processStartTime(info.pid);
      if (current !== null) return current === info.procStart;
    }
  }
  return now - mtimeMs <= Math.max(60_000, 6 * info.heartbeatMs);
}

/** A runtime's owner lease on a runs directory. */
export interface OwnerLease {
  readonly id: string;
  /** Stops the heartbeat and removes the owner file. */
  release(): Promise<void>;
}

export interface OwnerLeaseOptions {
  runsDir: string;
  logger: Logger;
  /** How often the owner file's mtime is refreshed. @default 10000 */
  heartbeatMs?: number;
}

/** Writes this runtime's owner file and starts its heartbeat (an unref'd timer). */
export async function acquireOwnerLease(options: OwnerLeaseOptions): Promise<OwnerLease> {
  const { runsDir, logger } = options;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const id = newOwnerId();
  const path = join(runsDir, ownerFileName(id));
  const info: OwnerInfo = {
    id,
    pid: process.pid,
    machine: machineId(),
    procStart: processStartTime(process.pid),
    heartbeatMs,
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
    async release() {
      released = true;
      clearInterval(timer);
      await unlink(path).catch(() => undefined);
    },
  };
}
