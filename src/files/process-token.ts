/**
 * This process's identity in shared runs directories: `<pid base 36>-<8 random hex>`. Temp files
 * of both atomic writers and the owner ids of runtimes start with it, so start-up recovery can
 * tell the files of a live process (left alone) from those of a dead one (cleaned up).
 */
import { randomBytes } from 'node:crypto';

/** The process token (see the module comment); fixed for the life of the process. */
export const PROCESS_TOKEN = `${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`;

/** The process token at the end of a temp file name (`.<target>.<token>-[w]<n>.tmp`). */
export const TEMP_FILE_TOKEN = /\.([0-9a-z]+-[0-9a-f]{8})-w?[0-9a-z]+\.tmp$/;

let owners = 0;

/** A new owner id: the process token plus a counter (several runtimes may share a process). */
export function newOwnerId(): string {
  return `${PROCESS_TOKEN}-${(owners++).toString(36)}`;
}

/** The process token of an owner id. */
export function tokenOfOwner(ownerId: string): string {
  return ownerId.slice(0, ownerId.lastIndexOf('-'));
}
