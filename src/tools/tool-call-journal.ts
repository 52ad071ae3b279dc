/**
 * The journal of MCP tool calls (issue 28 point 1): a call's answer is appended and flushed to
 * `<runs dir>/.tool-calls/<run id>.jsonl` before the agent loop sees it, so before its step can
 * complete. When a run is resumed after its process died, its interrupted step runs again; when
 * its model asks for the same call again (the same step, tool and arguments, the n-th such call of
 * the step), the recorded answer is given back and the server is not called again. The file is
 * removed when the run ends.
 *
 * A call is recorded when the tool answered (its result, or its own error); a call the server
 * never answered (down, timed out) is not: it may run again.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A recorded answer: the tool's result, or the message of the error it answered. */
export type JournaledAnswer = { ok: true; value: unknown } | { ok: false; error: string };

export interface ToolCallJournal {
  /**
   * The key of a call of `tool` with `args` by `step` of `runId`: the n-th identical call of the
   * step in this process has ordinal n, so a resumed step's calls meet their recorded answers in order.
   */
  keyOf(runId: string, step: string, tool: string, args: unknown): string;
  recall(runId: string, key: string): Promise<JournaledAnswer | undefined>;
  /** Appends and flushes the answer; resolves once it is on disk. */
  record(runId: string, key: string, answer: JournaledAnswer): Promise<void>;
  /** The run ended: its journal is removed. */
  forget(runId: string): Promise<void>;
}

const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function createToolCallJournal(runsDir: string): ToolCallJournal {
  const dir = join(runsDir, '.tool-calls');
  /** Calls seen per run, step, tool and arguments (the ordinals); dropped when the run ends. */
  const seen = new Map<string, Map<string, number>>();
  const fileOf = (runId: string): string | undefined =>
    RUN_ID.test(runId) ? join(dir, `${runId}.jsonl`) : undefined;
  return {
    keyOf(runId, step, tool, args) {
      const base = JSON.stringify([step, tool, args]);
      let counts = seen.get(runId);
      if (counts === undefined) {
        counts = new Map();
        seen.set(runId, counts);
      }
      const ordinal = counts.get(base) ?? 0;
      counts.set(base, ordinal + 1);
      return createHash('sha256')
        .update(JSON.stringify([base, ordinal]))
        .digest('hex');
    },
    async recall(runId, key) {
      const file = fileOf(runId);
      if (file === undefined) return undefined;
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      for (const line of text.split('\n')) {
        if (line === '') continue;
        try {
          const entry = JSON.parse(line) as { k: string; a: JournaledAnswer };
          if (entry.k === key) return entry.a;
        } catch {
          // A torn last line (the process died while appending): that call was not recorded.
          continue;
        }
      }
      return undefined;
    },
    async record(runId, key, answer) {
      const file = fileOf(runId);
      if (file === undefined) return;
      await mkdir(dir, { recursive: true });
      const handle = await open(file, 'a');
      try {
        await handle.write(`${JSON.stringify({ k: key, a: answer })}\n`);
        await handle.datasync();
      } finally {
        await handle.close();
      }
    },
    async forget(runId) {
      seen.delete(runId);
      const file = fileOf(runId);
      if (file === undefined) return;
      await unlink(file).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
    },
  };
}
