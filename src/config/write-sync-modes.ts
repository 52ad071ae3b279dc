/**
 * How run records are made durable (AGENTIC_WRITE_SYNC, `RuntimeOptions.writeSync`; see
 * docs/durable-run-files.md). Its one source is the variable's enum in
 * schemas/config.schema.json.
 */
import schema from '../../schemas/config.schema.json' with { type: 'json' };
import type { Environment } from '../generated/config.js';

export type WriteSyncMode = NonNullable<Environment['AGENTIC_WRITE_SYNC']>;

/** Every mode, as the schema lists them. */
export const WRITE_SYNC_MODES: readonly WriteSyncMode[] = Object.freeze(
  schema.properties.AGENTIC_WRITE_SYNC.enum as WriteSyncMode[],
);

/** The modes by name: `log` (the process log's group commit), `file` (an fsync per file), `off`. */
export const WRITE_SYNC_MODE = {
  LOG: 'log',
  FILE: 'file',
  OFF: 'off',
} as const satisfies Record<string, WriteSyncMode>;
