/**
 * The names tools are offered to a model under. Providers accept only `^[a-zA-Z0-9_-]{1,64}$`
 * (OpenAI, Anthropic; Gemini is stricter still about the first character), so an MCP tool's
 * `mcp:<server>:<tool>` is offered as `mcp__<server>__<tool>`, other characters as `_`, cut to 64
 * with a hash suffix when longer or when two names would meet. Built-in names pass unchanged.
 */
import { createHash } from 'node:crypto';

const WIRE_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** Wire name → registry name, for the given registry names. */
export function wireToolNames(names: readonly string[]): Map<string, string> {
  const wire = new Map<string, string>();
  for (const name of names) {
    let candidate = WIRE_NAME.test(name)
      ? name
      : name.replace(/:/g, '__').replace(/[^a-zA-Z0-9_-]/g, '_');
    if (!/^[a-zA-Z]/.test(candidate)) candidate = `t_${candidate}`;
    if (candidate.length > 64 || (wire.has(candidate) && wire.get(candidate) !== name)) {
      const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
      candidate = `${candidate.slice(0, 55)}_${hash}`;
    }
    wire.set(candidate, name);
  }
  return wire;
}
