import { lstat, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  PathEscapeError,
  resolveFileToolPath,
  resolveFileToolPathSync,
} from '../security/index.js';
import { ToolError } from './tool-error.js';
import { TOOL_RISKS, type ToolDefinition } from './types.js';

export interface FileToolsOptions {
  /** AGENTIC_FILE_BASE_DIR; every file operation is refused when undefined. */
  baseDir: string | undefined;
  /** Largest file `file_read` returns and `file_write` writes (bytes). */
  maxFileBytes: number;
  /** Most entries `file_list` returns. */
  maxListEntries: number;
}

const PATH = { type: 'string', minLength: 1, maxLength: 4096 } as const;

/**
 * `file_read`, `file_list`, `file_write`, `file_delete`: paths relative to the base directory,
 * contained after resolving symlinks (spec, Safety controls 2). Messages name the caller's
 * relative path only, never the base directory.
 */
export function createFileTools(options: FileToolsOptions): ToolDefinition[] {
  const locate = async (tool: string, path: string): Promise<string> => {
    try {
      return await resolveFileToolPath(options.baseDir, path);
    } catch (error) {
      if (error instanceof PathEscapeError) {
        throw new ToolError(tool, `path refused (${error.reason})`, 'path', error);
      }
      throw fsError(tool, path, error);
    }
  };
  /** The tools' `check`: a path out of the base directory is refused as `locate` refuses it. */
  const refuseEscape =
    (tool: string) =>
    (args: Record<string, unknown>): void => {
      try {
        resolveFileToolPathSync(options.baseDir, String(args.path));
      } catch (error) {
        // Anything else (the base directory missing) is the call's own to report.
        if (!(error instanceof PathEscapeError)) return;
        throw new ToolError(tool, `path refused (${error.reason})`, 'path', error);
      }
    };
  /** The content's size in bytes; refused past the limit. */
  const checkSize = (content: string): number => {
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > options.maxFileBytes) {
      throw new ToolError(
        'file_write',
        `content is larger than ${options.maxFileBytes} bytes`,
        'write',
      );
    }
    return bytes;
  };
  return [
    {
      name: 'file_read',
      description: 'Reads a UTF-8 text file under the base directory: {path} → {content, bytes}.',
      risk: TOOL_RISKS.LOW,
      parameters: objectOf({ path: PATH }),
      check: refuseEscape('file_read'),
      run: async (args, { signal }) => {
        const path = String(args.path);
        const target = await locate('file_read', path);
        // stat, not lstat: a symlink that stays inside the base (checked above) is read through.
        const info = await stat(target).catch((error: unknown) => {
          throw fsError('file_read', path, error);
        });
        if (!info.isFile()) throw new ToolError('file_read', `${path} is not a file`, 'read');
        if (info.size > options.maxFileBytes) {
          throw new ToolError(
            'file_read',
            `${path} is larger than ${options.maxFileBytes} bytes`,
            'read',
          );
        }
        const content = await readFile(target, { encoding: 'utf8', signal }).catch(
          (error: unknown) => {
            throw fsError('file_read', path, error);
          },
        );
        return { content, bytes: info.size };
      },
    },
    {
      name: 'file_list',
      description:
        'Lists a directory under the base directory: {path} → {entries: [{name, type}]}.',
      risk: TOOL_RISKS.LOW,
      parameters: objectOf({ path: PATH }),
      check: refuseEscape('file_list'),
      run: async (args) => {
        const path = String(args.path);
        const target = await locate('file_list', path);
        const dirents = await readdir(target, { withFileTypes: true }).catch((error: unknown) => {
          throw fsError('file_list', path, error);
        });
        const entries = dirents
          .map((entry) => ({
            name: entry.name,
            type: entry.isDirectory()
              ? 'directory'
              : entry.isFile()
                ? 'file'
                : entry.isSymbolicLink()
                  ? 'symlink'
                  : 'other',
          }))
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        return {
          entries: entries.slice(0, options.maxListEntries),
          truncated: entries.length > options.maxListEntries,
        };
      },
    },
    {
      name: 'file_write',
      description:
        'Writes UTF-8 text under the base directory, creating parent directories: {path, content} → {bytes}.',
      risk: TOOL_RISKS.HIGH,
      parameters: objectOf({ path: PATH, content: { type: 'string' } }),
      check: (args) => {
        checkSize(String(args.content));
        refuseEscape('file_write')(args);
      },
      run: async (args, { signal }) => {
        const path = String(args.path);
        const content = String(args.content);
        const bytes = checkSize(content);
        const target = await locate('file_write', path);
        await mkdir(dirname(target), { recursive: true }).catch((error: unknown) => {
          throw fsError('file_write', path, error);
        });
        // Checked again after mkdir: a directory swapped for a symlink meanwhile is refused.
        const checked = await locate('file_write', path);
        await writeFile(checked, content, { encoding: 'utf8', signal, flag: 'w' }).catch(
          (error: unknown) => {
            throw fsError('file_write', path, error);
          },
        );
        return { bytes };
      },
    },
    {
      name: 'file_delete',
      description: 'Deletes a file (not a directory) under the base directory: {path} → {deleted}.',
      risk: TOOL_RISKS.HIGH,
      parameters: objectOf({ path: PATH }),
      check: refuseEscape('file_delete'),
      run: async (args) => {
        const path = String(args.path);
        const target = await locate('file_delete', path);
        const info = await lstat(target).catch((error: unknown) => {
          throw fsError('file_delete', path, error);
        });
        if (info.isDirectory())
          throw new ToolError('file_delete', `${path} is a directory`, 'delete');
        await rm(target).catch((error: unknown) => {
          throw fsError('file_delete', path, error);
        });
        return { deleted: true };
      },
    },
  ];
}

function objectOf(properties: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

/** A file-system failure in the caller's terms: the error code and their relative path. */
function fsError(tool: string, path: string, error: unknown): ToolError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const what =
    code === 'ENOENT'
      ? 'does not exist'
      : code === 'ENOTDIR'
        ? 'is not under a directory'
        : code === 'EISDIR'
          ? 'is a directory'
          : `failed (${code ?? 'error'})`;
  return new ToolError(tool, `${path} ${what}`, tool.slice('file_'.length), error);
}
