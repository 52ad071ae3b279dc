/**
 * Schema enums that copy a closed set declared once in TypeScript. Each schema file must stand
 * alone for clients, so it lists the values itself; `npm run gen` writes them from the one
 * declaration (and `gen:check` fails when a copy differs), instead of keeping them in step by hand.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { STEP_RESUME_POLICIES, STEP_STATUSES } from '../src/workflow/types.js';

export interface DerivedEnum {
  /** The schema file, relative to schemas/. */
  file: string;
  /** The keys leading to the `enum` array. */
  path: readonly string[];
  values: readonly string[];
}

export const DERIVED_ENUMS: readonly DerivedEnum[] = [
  { file: 'events.schema.json', path: ['$defs', 'StepStatus', 'enum'], values: STEP_STATUSES },
  {
    file: 'run-record.schema.json',
    path: ['$defs', 'StepRecord', 'properties', 'status', 'enum'],
    values: STEP_STATUSES,
  },
  {
    file: 'workflow.schema.json',
    path: ['$defs', 'step', 'properties', 'resume', 'enum'],
    values: STEP_RESUME_POLICIES,
  },
];

function valueAt(document: unknown, path: readonly string[]): unknown {
  let node = document;
  for (const key of path) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The schema text with each enum of `enums` (all in this file) set to its values; only the array
 * itself is rewritten, so the file keeps its layout. Throws when the enum is missing or its
 * current values appear as an enum more than once in the file (which one is meant is unclear).
 */
export async function withDerivedEnums(
  text: string,
  enums: readonly DerivedEnum[],
  filepath: string,
): Promise<string> {
  let next = text;
  for (const derived of enums) {
    const current = valueAt(JSON.parse(next), derived.path);
    if (!Array.isArray(current)) {
      throw new Error(`${derived.file}: no enum at ${derived.path.join('.')}`);
    }
    if (JSON.stringify(current) === JSON.stringify(derived.values)) continue;
    const items = current.map((value) => escapeRegExp(JSON.stringify(value))).join('\\s*,\\s*');
    const pattern = new RegExp(`("enum"\\s*:\\s*)\\[\\s*${items}\\s*\\]`, 'g');
    const found = next.match(pattern)?.length ?? 0;
    if (found !== 1) {
      throw new Error(
        `${derived.file}: the enum at ${derived.path.join('.')} appears ${found} times; edit it by hand`,
      );
    }
    next = next.replace(pattern, (_all, key: string) => `${key}${JSON.stringify(derived.values)}`);
  }
  if (next === text) return text;
  return format(next, { ...(await resolveConfig(filepath)), filepath, parser: 'json' });
}

/** Every schema file with a derived enum, its text with the enums written (path → text). */
export async function derivedEnumSchemas(schemasDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const file of new Set(DERIVED_ENUMS.map((derived) => derived.file))) {
    const path = join(schemasDir, file);
    const enums = DERIVED_ENUMS.filter((derived) => derived.file === file);
    out.set(path, await withDerivedEnums(await readFile(path, 'utf8'), enums, path));
  }
  return out;
}
