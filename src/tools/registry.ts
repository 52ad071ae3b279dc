import { createHash } from 'node:crypto';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { ApprovalProvider } from './approval.js';
import { ToolError } from './tool-error.js';
import type { ToolCallJournal } from './tool-call-journal.js';
import { TOOL_RISKS, type ToolCallContext, type ToolDefinition } from './types.js';

/** Who is calling a tool, for the allowlist and the approval provider. */
export interface ToolCaller {
  workflow: string;
  step: string;
  runId: string;
  /** The step's `tools:` list: everything else is denied. */
  allowed: readonly string[];
}

/** The tools a runtime offers, and the one way to call them. */
export interface ToolRegistry {
  /** The built-in tools' names (MCP tools are found by {@link find}). */
  names(): string[];
  /** A built-in tool. */
  get(name: string): ToolDefinition | undefined;
  /**
   * A built-in tool, or an MCP server's (`mcp:<server>:<tool>`, the server connected if needed);
   * undefined when there is no such tool; rejects with a {@link ToolError} naming the server when
   * it is not configured or cannot be reached.
   */
  find(name: string): Promise<ToolDefinition | undefined>;
  /**
   * Calls `name` for `caller`: refused unless the step lists it, arguments validated against
   * its schema and the tool's own `check`, then high-risk tools asked of the approval provider. Every refusal or failure
   * rejects with a {@link ToolError}.
   */
  call(name: string, args: unknown, caller: ToolCaller, context: ToolCallContext): Promise<unknown>;
}

/** How a tool call ended (the `outcome` label of the tool-call metric). */
export type ToolCallOutcome = 'success' | 'error' | 'denied' | 'refused';

/** One finished tool call (metrics). `tool` is `_unknown` for names the registry does not have. */
export interface ToolCallReport {
  tool: string;
  /**
   * `refused`: not a tool, not in the step's `tools:`, or bad arguments (the schema's or the
   * tool's `check`, before any approval); `denied`: the approval
   * gate said no; `error`: the tool ran and failed; `success`.
   */
  outcome: ToolCallOutcome;
}

/** The tool label of a call to a name the registry does not have (keeps the label bounded). */
export const UNKNOWN_TOOL = '_unknown';

/** Tools found by name beyond the registry's own (the MCP servers'; see mcp/mcp-tools.ts). */
export interface ExternalToolSource {
  find(name: string): Promise<ToolDefinition | undefined>;
}

export function createToolRegistry(
  tools: readonly ToolDefinition[],
  approval: ApprovalProvider,
  onCall?: (report: ToolCallReport) => void,
  external?: ExternalToolSource,
  journal?: ToolCallJournal,
): ToolRegistry {
  const byName = new Map<string, { tool: ToolDefinition; validate?: ValidateFunction }>();
  /** External tools by name, with their compiled schema (again when the server lists anew). */
  const externals = new Map<string, { tool: ToolDefinition; validate?: ValidateFunction }>();
  /** The ids of the calls waiting for approval here (see {@link approvalCallId}). */
  const waitingCalls = new Set<string>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool ${tool.name}`);
    byName.set(tool.name, { tool });
  }
  // Parameter schemas are compiled at a tool's first call, not when a runtime starts: ajv's
  // compiler and the compiling cost every process about 0.1 s (issue 25) for tools most runs
  // never call. The schemas are the built-in tools' own (tested), so none fails to compile.
  let ajv: Promise<Ajv2020> | undefined;
  const validatorOf = async (entry: {
    tool: ToolDefinition;
    validate?: ValidateFunction;
  }): Promise<ValidateFunction> => {
    if (entry.validate !== undefined) return entry.validate;
    ajv ??= import('ajv/dist/2020.js').then(
      ({ Ajv2020: AjvClass }) => new AjvClass({ allErrors: true, strict: true }),
    );
    entry.validate ??= (await ajv).compile(entry.tool.parameters);
    return entry.validate;
  };
  // A server's schema is its own: other drafts' keywords and formats are not errors here
  // (strict: false), `$schema` is dropped (the 2020-12 compiler knows no other meta-schema), and
  // one that cannot compile refuses the call rather than running it unchecked.
  let lenientAjv: Promise<Ajv2020> | undefined;
  const externalValidatorOf = async (entry: {
    tool: ToolDefinition;
    validate?: ValidateFunction;
  }): Promise<ValidateFunction> => {
    if (entry.validate !== undefined) return entry.validate;
    lenientAjv ??= import('ajv/dist/2020.js').then(
      ({ Ajv2020: AjvClass }) =>
        new AjvClass({ allErrors: true, strict: false, validateFormats: false }),
    );
    const { $schema: _ignored, ...schema } = entry.tool.parameters;
    try {
      entry.validate ??= (await lenientAjv).compile(schema);
    } catch (error) {
      throw new ToolError(
        entry.tool.name,
        `its input schema cannot be used: ${error instanceof Error ? error.message : 'invalid'}`,
      );
    }
    return entry.validate;
  };
  const lookup = async (
    name: string,
  ): Promise<
    { entry: { tool: ToolDefinition; validate?: ValidateFunction }; external: boolean } | undefined
  > => {
    const own = byName.get(name);
    if (own !== undefined) return { entry: own, external: false };
    if (external === undefined) return undefined;
    const tool = await external.find(name);
    if (tool === undefined) return undefined;
    let entry = externals.get(name);
    if (entry?.tool !== tool) {
      entry = { tool };
      externals.set(name, entry);
    }
    return { entry, external: true };
  };
  /** One call; `progress.ran` tells a failure of the tool from a refusal before it ran. */
  const call = async (
    name: string,
    args: unknown,
    caller: ToolCaller,
    context: ToolCallContext,
    progress: { ran: boolean; known: boolean },
  ): Promise<unknown> => {
    // Deny by default before anything else: an unlisted MCP tool does not even connect its server.
    if (!caller.allowed.includes(name)) {
      if (byName.has(name)) progress.known = true;
      throw new ToolError(
        name,
        byName.has(name) || external !== undefined
          ? `not allowed: step '${caller.step}' does not list it in tools`
          : 'no such tool',
      );
    }
    const found = await lookup(name);
    if (found === undefined) throw new ToolError(name, 'no such tool');
    progress.known = true;
    const { entry } = found;
    const validate = found.external ? await externalValidatorOf(entry) : await validatorOf(entry);
    if (!validate(args)) {
      const problems = (validate.errors ?? [])
        .map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'invalid'}`)
        .join('; ');
      throw new ToolError(name, `invalid arguments: ${problems}`);
    }
    const valid = args as Record<string, unknown>;
    // Before the gate: a person is never asked about a call the tool would refuse anyway.
    if (entry.tool.check !== undefined) {
      try {
        await entry.tool.check(valid);
      } catch (error) {
        throw asToolError(name, error);
      }
    }
    if (entry.tool.risk === TOOL_RISKS.HIGH) {
      const { allowed: _allowed, ...who } = caller;
      context.onApproval?.(true);
      const callId = approvalCallId(caller, name, valid, waitingCalls);
      let decision;
      try {
        decision = await approval.decide({
          callId,
          toolName: name,
          args: valid,
          ...who,
          signal: context.signal,
        });
      } finally {
        waitingCalls.delete(callId);
        context.onApproval?.(false);
      }
      if (!decision.approved) throw new ToolError(name, `denied: ${decision.reason}`, 'approval');
    }
    progress.ran = true;
    if (found.external && journal !== undefined)
      return journaled(entry.tool, valid, caller, context, journal);
    try {
      return await entry.tool.run(valid, context);
    } catch (error) {
      throw asToolError(name, error);
    }
  };

  return {
    names: () => [...byName.keys()].sort(),
    get: (name) => byName.get(name)?.tool,
    find: async (name) => (await lookup(name))?.entry.tool,
    call: async (name, args, caller, context) => {
      const progress = { ran: false, known: false };
      if (onCall === undefined) return call(name, args, caller, context, progress);
      try {
        const result = await call(name, args, caller, context, progress);
        onCall({ tool: name, outcome: 'success' });
        return result;
      } catch (error) {
        // Names the registry has not found stay out of the label (bounded cardinality).
        onCall({
          tool: progress.known ? name : UNKNOWN_TOOL,
          outcome: outcomeOf(error, progress.ran),
        });
        throw error;
      }
    },
  };
}

/**
 * An MCP tool's call through the journal (tool-call-journal.ts): a call already answered for this
 * run and step (before its process died) is answered from the journal; otherwise the answer is
 * recorded before it is returned. A call the server never answered is not recorded.
 */
async function journaled(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  caller: ToolCaller,
  context: ToolCallContext,
  journal: ToolCallJournal,
): Promise<unknown> {
  const key = journal.keyOf(caller.runId, caller.step, tool.name, args);
  const recorded = await journal.recall(caller.runId, key);
  if (recorded !== undefined) {
    if (recorded.ok) return recorded.value;
    throw new ToolError(tool.name, recorded.error, 'mcp');
  }
  try {
    const value = await tool.run(args, context);
    await journal.record(caller.runId, key, { ok: true, value });
    return value;
  } catch (error) {
    const failure = asToolError(tool.name, error);
    if (failure.operation === 'mcp-answer') {
      await journal.record(caller.runId, key, {
        ok: false,
        error: failure.message.replace(`tool ${tool.name}: `, ''),
      });
    }
    throw failure;
  }
}

/** What a tool threw, as a {@link ToolError}. */
function asToolError(name: string, error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  return new ToolError(name, error instanceof Error ? error.message : 'failed', undefined, error);
}

/** The outcome label of a failed call. */
function outcomeOf(error: unknown, ran: boolean): ToolCallOutcome {
  if (ran) return 'error';
  return error instanceof ToolError && error.operation === 'approval' ? 'denied' : 'refused';
}

/**
 * The id of a tool call waiting for approval: derived from the run, the step, the tool and its
 * arguments (UUID-shaped), so the same call asked again after its process died and the run was
 * resumed (docs/scale-out.md, "Approvals across a restart") keeps the id its client already
 * has. Identical calls of one step waiting at once get an ordinal (`inFlight`: the ids waiting
 * in this process).
 */
export function approvalCallId(
  caller: Pick<ToolCaller, 'runId' | 'step'>,
  tool: string,
  args: unknown,
  inFlight: Set<string>,
): string {
  for (let ordinal = 0; ; ordinal++) {
    const hex = createHash('sha256')
      .update(JSON.stringify([caller.runId, caller.step, tool, args, ordinal]))
      .digest('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    if (!inFlight.has(id)) {
      inFlight.add(id);
      return id;
    }
  }
}
