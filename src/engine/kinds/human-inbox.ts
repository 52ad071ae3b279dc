/**
 * The questions human steps of one runtime's runs are waiting on (docs/workflow-format.md,
 * "Human steps"): listed with the tool calls waiting for approval (`GET /api/approvals`) and
 * answered through the same endpoint. One per runtime, held in memory: a question lives as long
 * as the attempt asking it, and a restarted process asks again (same id) when it resumes the run.
 */

/** A human step's question, waiting for an answer. */
export interface PendingInput {
  /** The request id (`call_id` on the wire): the same for the run's step after a restart. */
  id: string;
  runId: string;
  workflow: string;
  step: string;
  /** The step's prompt, rendered. */
  prompt: string;
  /** The JSON Schema the answer must match. */
  schema: Record<string, unknown>;
  /** Epoch ms. */
  requestedAt: number;
  /** Epoch ms: when the step times out; undefined: it waits until answered or its run ends. */
  expiresAt: number | undefined;
}

/**
 * What answering a question did: `decided` (the step has its answer), `unknown` (404: no such
 * question here), `already_decided` (409: answered, timed out or its run ended), or `invalid`
 * (422: the answer does not match the schema; nothing changed).
 */
export type InputAnswer = 'decided' | 'unknown' | 'already_decided' | { invalid: string };

/** How a waiting question is answered: the answer checked, then handed to the step. */
export interface WaitingInput {
  readonly info: PendingInput;
  /** What is wrong with `answer`, undefined when it matches the schema. */
  check(answer: unknown): string | undefined;
  /** Hands the step its answer (called once, with a checked answer). */
  settle(answer: Record<string, unknown>): void;
}

/** Ended question ids remembered for the 409 of a late answer (oldest forgotten first). */
const ENDED_MEMORY = 1000;

export interface HumanInbox {
  /** Questions waiting now, oldest first. */
  pending(): PendingInput[];
  /** Whether question `id` waits here. */
  has(id: string): boolean;
  /** Whether any question waits here. */
  hasPending(): boolean;
  /** Whether question `id` waited here and ended (recently: the last 1,000 ended are kept). */
  ended(id: string): boolean;
  /** Answers question `id` (see {@link InputAnswer}). */
  answer(id: string, answer: unknown): InputAnswer;
  /** A question starts waiting (a new ask of an id forgets that it had ended). */
  add(waiting: WaitingInput): void;
  /** A question stops waiting (answered, timed out, its run cancelled): a late answer is a 409. */
  end(id: string): void;
}

export function createHumanInbox(): HumanInbox {
  const waiting = new Map<string, WaitingInput>();
  // A Set keeps insertion order: the first entry is the oldest.
  const ended = new Set<string>();
  return {
    pending: () => [...waiting.values()].map((entry) => entry.info),
    has: (id) => waiting.has(id),
    hasPending: () => waiting.size > 0,
    ended: (id) => ended.has(id),
    answer(id, answer) {
      const entry = waiting.get(id);
      if (entry === undefined) return ended.has(id) ? 'already_decided' : 'unknown';
      const problem = entry.check(answer);
      if (problem !== undefined) return { invalid: problem };
      entry.settle(answer as Record<string, unknown>);
      return 'decided';
    },
    add(entry) {
      ended.delete(entry.info.id);
      waiting.set(entry.info.id, entry);
    },
    end(id) {
      if (!waiting.delete(id)) return;
      ended.add(id);
      if (ended.size > ENDED_MEMORY) {
        const oldest = ended.values().next().value;
        if (oldest !== undefined) ended.delete(oldest);
      }
    },
  };
}
