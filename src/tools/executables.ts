import { access, constants, realpath } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * The real path of `command`: absolute paths as they are, bare names searched in `path`
 * (the PATH of the child environment); symlinks resolved, so `/usr/bin/python3` and its
 * target compare equal. Undefined when nothing executable is found. Relative paths with a
 * separator (`./x`, `bin/x`) are never resolved: they would depend on the working directory.
 */
export async function resolveExecutable(
  command: string,
  path: string,
): Promise<string | undefined> {
  if (command.length === 0 || command.includes('\0')) return undefined;
  const candidates = isAbsolute(command)
    ? [command]
    : command.includes('/')
      ? []
      : path
          .split(delimiter)
          .filter((dir) => isAbsolute(dir))
          .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return await realpath(candidate);
    } catch {
      // Not here, or not executable: try the next directory.
      continue;
    }
  }
  return undefined;
}
