/**
 * Byte bounds on what a request can make the process hold (docs/limits.md): YAML text, its
 * alias-expanded size, rendered templates, a step's input and output, a run record. Each has
 * a default here and a variable in `schemas/config.schema.json`.
 */

/** The content bounds of a runtime. Sizes are JSON bytes as the run file would hold them. */
export interface ContentLimits {
  /** Longest YAML text parsed (workflows, agent catalogues). @default 1048576 (1 MiB) */
  maxYamlBytes: number;
  /**
   * Largest size of a YAML document once its aliases are expanded (what the run file and every
   * client would get); a billion-laughs document is refused before it is materialised.
   * @default 4194304 (4 MiB)
   */
  maxExpandedYamlBytes: number;
  /**
   * Largest text one evaluation of a template (a step's `inputs`, the workflow `outputs`) may
   * build by interpolation; over it the step fails (the workflow outputs become a marker).
   * @default 1048576 (1 MiB)
   */
  maxTemplateBytes: number;
  /**
   * Largest step input and step output; bigger entries are replaced by a truncation marker.
   * @default 1048576 (1 MiB)
   */
  maxStepIoBytes: number;
  /**
   * Largest run record; above it the biggest step inputs, outputs and the final output are
   * replaced by truncation markers until it fits. @default 16777216 (16 MiB)
   */
  maxRunRecordBytes: number;
  /**
   * Most bytes of step inputs and outputs one run holds, over all its steps (what its journal
   * and record then hold too); a step input or output that would take the run over it is kept as
   * truncation markers (biggest entries first), listed in `extra.warnings`.
   * @default the run-record bound, {@link ContentLimits.maxRunRecordBytes} (16 MiB)
   */
  maxRunBytes: number;
}

export const DEFAULT_CONTENT_LIMITS: Readonly<ContentLimits> = Object.freeze({
  maxYamlBytes: 1024 * 1024,
  maxExpandedYamlBytes: 4 * 1024 * 1024,
  maxTemplateBytes: 1024 * 1024,
  maxStepIoBytes: 1024 * 1024,
  maxRunRecordBytes: 16 * 1024 * 1024,
  maxRunBytes: 16 * 1024 * 1024,
});

/** The variable that sets each bound (for messages that tell the user what to change). */
export const CONTENT_LIMIT_VARIABLES: Readonly<Record<keyof ContentLimits, string>> = Object.freeze(
  {
    maxYamlBytes: 'AGENTIC_MAX_YAML_BYTES',
    maxExpandedYamlBytes: 'AGENTIC_MAX_EXPANDED_YAML_BYTES',
    maxTemplateBytes: 'AGENTIC_MAX_TEMPLATE_BYTES',
    maxStepIoBytes: 'AGENTIC_MAX_STEP_IO_BYTES',
    maxRunRecordBytes: 'AGENTIC_MAX_RUN_RECORD_BYTES',
    maxRunBytes: 'AGENTIC_MAX_RUN_BYTES',
  },
);

/**
 * Nesting levels a YAML document may have (maps, lists, flow collections), checked before the
 * parser runs: the parser is recursive, and 300 000 nested `[` blocked the event loop for
 * seconds before overflowing its stack. Step inputs allow 64 levels; the workflow around them
 * takes a few more.
 */
export const MAX_YAML_DEPTH = 100;

/**
 * The defaults with `overrides` applied; problems (non-positive, non-integer) are listed.
 * `maxRunBytes` follows `maxRunRecordBytes` unless given.
 */
export function resolveContentLimits(
  overrides: Partial<ContentLimits> = {},
  problems: string[] = [],
): ContentLimits {
  const limits = { ...DEFAULT_CONTENT_LIMITS };
  for (const key of Object.keys(DEFAULT_CONTENT_LIMITS) as (keyof ContentLimits)[]) {
    const value = overrides[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1)
      problems.push(`limits.${key} must be a positive integer`);
    else limits[key] = value;
  }
  if (overrides.maxRunBytes === undefined) limits.maxRunBytes = limits.maxRunRecordBytes;
  return Object.freeze(limits);
}
