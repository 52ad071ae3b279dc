/**
 * Tool-call approvals across a deployment (docs/tools.md, "Approval", provider `http`): a call waits in
 * the runtime of the worker executing its run, while `GET/POST /api/approvals` reach any api
 * instance. Each worker mirrors its waiting calls into a Redis hash of its own and takes answers
 * from a pub/sub channel: the worker holding the call answers it and replies on the asking
 * instance's reply channel with the outcome (`decided`, `already_decided`). An api instance lists
 * the hashes and sends answers; a call no worker holds is `already_decided` when it was decided
 * within the hour, else `unknown` (404).
 *
 * A waiting call lives as long as its worker: the worker's hash expires
 * `AGENTIC_WORKER_LOCK_SECONDS` after the worker last renewed it, the window after which the
 * queue takes the worker for dead and its runs end interrupted (run-worker.ts), and a call whose
 * run is no longer active (its claim released) is not listed even before. A killed worker's calls
 * thus leave the listing and Redis within that window. The arguments are stored only when the
 * events and the listing show them (AGENTIC_APPROVAL_EVENT_ARGUMENTS). Human steps' questions
 * (kind input) go the same way: listed from the same hashes, their answers relayed with
 * `answer` set, the 422 of an answer that does not match coming back as the reply's outcome.
 * A run paused at its budget (kind budget, docs/budgets.md) is raised the same way, with `budget`
 * set: the worker holding the run's ledger applies the new limits.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type {
  PendingRequest,
  RequestAnswer,
  RuntimeApprovals,
} from '../engine/runtime-approvals.js';
import type { RunServiceApprovals, Runtime } from '../engine/types.js';
import type { BudgetLimits } from '../engine/budget/budget-limits.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { ScaleKeys } from './keys.js';
import { CLOSE_WITH_REDIS_MS, settledWithin, unsubscribeQuietly } from './quiet-close.js';

/** 503: the calls of other processes cannot be reached while Redis is away. */
function redisAway(cause: unknown): DependencyError {
  return new DependencyError(
    'Redis is unavailable: approvals of runs on other instances cannot be reached until it is back',
    cause,
  );
}

/**
 * The entries of every worker's hash (KEYS[1]: the set of worker ids; ARGV[1]: the hashes' key
 * before the id) whose run is still active (KEYS[2]: the claimed run ids). A worker whose hash
 * has expired (dead) leaves the set here; a run declared interrupted (its claim released) has no
 * call waiting, even while its dead worker's hash has not expired yet. One script, so a worker
 * writing meanwhile is seen either before or after, never half. The hash keys are built from the
 * set: a single Redis, as the run queue needs anyway, not a cluster.
 */
const LIST_WAITING = `
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local entries = redis.call('HVALS', ARGV[1] .. id)
  if #entries == 0 then redis.call('SREM', KEYS[1], id) end
  for _, text in ipairs(entries) do
    local ok, entry = pcall(cjson.decode, text)
    if ok and type(entry) == 'table' and type(entry.runId) == 'string'
      and redis.call('SISMEMBER', KEYS[2], entry.runId) == 1 then
      out[#out + 1] = text
    end
  end
end
return out`;

/** How long an api instance waits for the holding worker's reply. */
const REPLY_TIMEOUT_MS = 5_000;
/** How long a decided call is remembered (its answer is then a 409, not a 404). */
const DECIDED_TTL_SECONDS = 3_600;

interface AnswerMessage {
  callId: string;
  approve: boolean;
  reason?: string;
  /** A human step's answer (the call is its question): `approve` and `reason` are ignored. */
  answer?: unknown;
  /** A budget pause's new limits (the call is the pause): `approve` and `reason` are ignored. */
  budget?: BudgetLimits;
  replyTo: string;
  request: string;
}

interface ReplyMessage {
  request: string;
  outcome: RequestAnswer;
}

export interface ApprovalSharingOptions {
  runtime: Pick<Runtime, 'subscribe' | 'approvals'>;
  /** A command connection. */
  redis: Redis;
  /** A connection for the answers channel (subscriber mode). */
  subscriber: Redis;
  keys: ScaleKeys;
  /**
   * AGENTIC_WORKER_LOCK_SECONDS in ms: this worker's waiting calls expire this long after it last
   * renewed them (a third of it apart).
   */
  lockMs: number;
  logger: Logger;
}

/** Worker side: mirrors the runtime's waiting calls and answers them. Returns the stop function. */
export function shareApprovals(options: ApprovalSharingOptions): () => Promise<void> {
  const { runtime, redis, subscriber, keys, logger, lockMs } = options;
  const { approvals } = runtime;
  const workerId = randomUUID();
  const hash = keys.approvalsPending(workerId);
  let failing = false;
  const warn = (what: string) => (error: unknown) => {
    if (failing) return; // once per outage: the renewals go on failing while Redis is away
    failing = true;
    logger.warn({ err: errorMessage(error) }, `approval ${what} not shared through Redis`);
  };
  let renewal: NodeJS.Timeout | undefined;
  /** The call ids written last time. */
  let mirrored = new Set<string>();

  /**
   * Writes this worker's waiting calls as they are now (the whole hash, so a hash that expired
   * while Redis was away comes back) and renews their expiry. A call written before and no
   * longer waiting (answered, timed out, its run cancelled) is marked decided in the same MULTI,
   * so it is always either listed or decided (a 409). Writes go in order on one connection: the
   * last one sent is what stays.
   */
  function mirror(decided?: string): void {
    const entries = approvals.pending();
    const waiting = new Set(entries.map((entry) => entry.callId));
    const ended = [...mirrored].filter((callId) => !waiting.has(callId));
    if (decided !== undefined && !ended.includes(decided)) ended.push(decided);
    const write = redis.multi();
    for (const callId of ended) {
      write.set(keys.approvalDecided(callId), '1', 'EX', DECIDED_TTL_SECONDS);
    }
    // Nothing to write when nothing waits nor did (every call of a provider other than `http`).
    if (entries.length > 0 || mirrored.size > 0) {
      write.del(hash);
      if (entries.length === 0) write.srem(keys.approvalsWorkers, workerId);
      else {
        const fields = entries.flatMap((entry) => [entry.callId, JSON.stringify(stored(entry))]);
        write
          .hset(hash, ...fields)
          .pexpire(hash, lockMs)
          .sadd(keys.approvalsWorkers, workerId)
          .pexpire(keys.approvalsWorkers, lockMs);
      }
    }
    mirrored = waiting;
    if (write.length > 0) write.exec().then(() => (failing = false), warn('list'));
    if (entries.length === 0) {
      clearInterval(renewal);
      renewal = undefined;
    } else if (renewal === undefined) {
      // A third of the expiry apart: one late renewal (a busy event loop) loses nothing.
      renewal = setInterval(() => mirror(), Math.max(100, Math.floor(lockMs / 3)));
      renewal.unref();
    }
  }

  /** Whether a call written last time waits no more (a cancelled run's ends without a decision). */
  function changed(): boolean {
    const entries = approvals.pending();
    return entries.length !== mirrored.size || entries.some((entry) => !mirrored.has(entry.callId));
  }

  /** What is stored of a waiting call: its arguments only where the events show them. */
  function stored(entry: PendingRequest): Omit<PendingRequest, 'args'> & { args?: unknown } {
    if (approvals.showArguments) return entry;
    const { args: _args, ...rest } = entry;
    return rest;
  }

  const offEvents = runtime.subscribe((event) => {
    if (event.type === 'approval_decision') mirror(event.call_id);
    else if (event.type === 'approval_required' || (mirrored.size > 0 && changed())) mirror();
  });
  const onMessage = (channel: string, message: string): void => {
    if (channel !== keys.approvalsAnswers) return;
    let answer: AnswerMessage;
    try {
      answer = JSON.parse(message) as AnswerMessage;
    } catch {
      return; // not ours
    }
    // Only the worker holding the call answers; the others stay silent.
    if (!approvals.pending().some((p) => p.callId === answer.callId)) return;
    const reply = (outcome: RequestAnswer): void => {
      const message: ReplyMessage = { request: answer.request, outcome };
      redis.publish(answer.replyTo, JSON.stringify(message)).catch(warn('answer'));
    };
    if (answer.budget !== undefined) {
      // The raise is written durably before it applies (raised-budget-file.ts): async.
      approvals.raise(answer.callId, answer.budget).then(reply, warn('budget raise'));
      return;
    }
    reply(
      answer.answer === undefined
        ? approvals.answer(answer.callId, answer.approve, answer.reason)
        : approvals.respond(answer.callId, answer.answer),
    );
  };
  subscriber.on('message', onMessage);
  const subscribed = subscriber.subscribe(keys.approvalsAnswers).catch(warn('channel'));
  return async () => {
    offEvents();
    clearInterval(renewal);
    subscriber.off('message', onMessage);
    await unsubscribeQuietly(subscriber, keys.approvalsAnswers, subscribed);
    // The runs have ended (their calls decided): nothing of this worker stays listed. Without
    // Redis the hash expires on its own.
    if (redis.status !== 'ready') return;
    const removed = redis.multi().del(hash).srem(keys.approvalsWorkers, workerId).exec();
    await settledWithin(removed.catch(warn('end')), CLOSE_WITH_REDIS_MS, undefined);
  };
}

export interface SharedApprovalsOptions {
  /** The provider's name and whether arguments are shown (as configured for the workers). */
  provider: string;
  showArguments: boolean;
  /**
   * The approvals of this process's own worker (role `all`): its calls are listed and answered
   * here directly, without Redis (so they can be answered while Redis is away). @default none
   */
  local?: RuntimeApprovals;
  redis: Redis;
  /** A connection for this instance's reply channel (subscriber mode). */
  subscriber: Redis;
  keys: ScaleKeys;
  logger: Logger;
}

/** Api side: the deployment's waiting calls, answered through their worker. */
export function createSharedApprovals(
  options: SharedApprovalsOptions,
): RunServiceApprovals & { close(): Promise<void> } {
  const { redis, subscriber, keys, local } = options;
  const replyTo = keys.approvalsReply(randomUUID());
  const waiting = new Map<string, (outcome: RequestAnswer | undefined) => void>();
  const onMessage = (channel: string, message: string): void => {
    if (channel !== replyTo) return;
    try {
      const reply = JSON.parse(message) as ReplyMessage;
      waiting.get(reply.request)?.(reply.outcome);
    } catch {
      // not ours
    }
  };
  subscriber.on('message', onMessage);
  const subscribed = subscriber.subscribe(replyTo).catch((error: unknown) => {
    options.logger.error({ err: errorMessage(error) }, 'cannot subscribe to approval replies');
  });

  /**
   * The calls waiting on the living workers whose runs are still active. Throws when Redis does
   * not answer.
   */
  async function shared(): Promise<PendingRequest[]> {
    const texts = (await redis.eval(
      LIST_WAITING,
      2,
      keys.approvalsWorkers,
      keys.claimsActive,
      keys.approvalsPending(''),
    )) as string[];
    const entries: PendingRequest[] = [];
    for (const text of texts) {
      try {
        const entry = JSON.parse(text) as Omit<PendingRequest, 'args'> & { args?: unknown };
        // Stored without arguments unless the events show them.
        entries.push({ ...entry, args: (entry.args ?? {}) as Record<string, unknown> });
      } catch {
        // not ours
      }
    }
    return entries;
  }

  /**
   * Hands an answer to the process holding request `callId`: this process's own worker directly,
   * else the worker whose hash lists it, over the answers channel.
   */
  async function relay(
    callId: string,
    fields: Pick<AnswerMessage, 'approve' | 'reason' | 'answer' | 'budget'>,
    own: (held: RuntimeApprovals) => RequestAnswer | Promise<RequestAnswer>,
  ): Promise<RequestAnswer> {
    if (local?.pending().some((entry) => entry.callId === callId) === true) return own(local);
    await subscribed;
    try {
      if (!(await shared()).some((entry) => entry.callId === callId)) {
        return (await redis.exists(keys.approvalDecided(callId))) === 1
          ? 'already_decided'
          : 'unknown';
      }
    } catch (error) {
      throw redisAway(error);
    }
    const request = randomUUID();
    const outcome = await new Promise<RequestAnswer | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), REPLY_TIMEOUT_MS);
      function settle(value: RequestAnswer | undefined): void {
        clearTimeout(timer);
        waiting.delete(request);
        resolve(value);
      }
      waiting.set(request, settle);
      const message: AnswerMessage = { callId, ...fields, replyTo, request };
      redis.publish(keys.approvalsAnswers, JSON.stringify(message)).catch(() => settle(undefined));
    });
    // No reply: no live worker holds the call (its worker died; the run ends interrupted).
    return outcome ?? 'unknown';
  }

  return {
    provider: options.provider,
    showArguments: options.showArguments,
    async pending() {
      const entries: PendingRequest[] = [...(local?.pending() ?? [])];
      const seen = new Set(entries.map((entry) => entry.callId));
      let others: PendingRequest[];
      try {
        others = await shared();
      } catch (error) {
        if (local === undefined) throw redisAway(error);
        others = []; // Redis away: this process's own calls are still listed
      }
      for (const entry of others) if (!seen.has(entry.callId)) entries.push(entry);
      return entries.sort((x, y) => x.requestedAt - y.requestedAt);
    },
    answer: (callId, approve, reason) =>
      relay(callId, { approve, ...(reason === undefined ? {} : { reason }) }, (held) =>
        held.answer(callId, approve, reason),
      ),
    respond: (id, answer) =>
      relay(id, { approve: true, answer }, (held) => held.respond(id, answer)),
    raise: (id, limits) =>
      relay(id, { approve: true, budget: limits }, (held) => held.raise(id, limits)),
    async close() {
      for (const settle of [...waiting.values()]) settle(undefined);
      subscriber.off('message', onMessage);
      await unsubscribeQuietly(subscriber, replyTo, subscribed);
    },
  };
}
